#include "worker/result_writer.h"

#include <algorithm>
#include <utility>

#include "store/attempt_history.h"
#include "worker/expiry_policy.h"

namespace room_outbox::relay {

HeldRooms::HeldRooms(std::chrono::milliseconds forget_after, size_t max_rooms)
    : forget_after_ms_(forget_after.count()), max_rooms_(std::max<size_t>(max_rooms, 1)) {}

bool HeldRooms::Hold(const std::string& room_id, int64_t now_ms) {
  Forget(now_ms);
  auto [it, entered] = last_seen_.try_emplace(room_id, now_ms);
  it->second = now_ms;
  if (entered && last_seen_.size() > max_rooms_) {
    // Over the bound: the least recently seen room other than this one goes.
    auto oldest = last_seen_.end();
    for (auto i = last_seen_.begin(); i != last_seen_.end(); ++i) {
      if (i->first != room_id && (oldest == last_seen_.end() || i->second < oldest->second)) {
        oldest = i;
      }
    }
    if (oldest != last_seen_.end()) last_seen_.erase(oldest);
  }
  return entered;
}

bool HeldRooms::Release(const std::string& room_id) { return last_seen_.erase(room_id) > 0; }

void HeldRooms::Forget(int64_t now_ms) {
  for (auto i = last_seen_.begin(); i != last_seen_.end();) {
    i = now_ms - i->second > forget_after_ms_ ? last_seen_.erase(i) : std::next(i);
  }
}

ResultWriter::ResultWriter(RelayStore& store, Metrics& metrics, Logger& logger, std::string node_id,
                           std::string token, HeldRooms* held_rooms, UnwrittenResults* unwritten)
    : store_(store),
      metrics_(metrics),
      logger_(logger),
      node_id_(std::move(node_id)),
      token_(std::move(token)),
      held_rooms_(held_rooms),
      unwritten_(unwritten) {}

void ResultWriter::Delivered(const OutboxRow& row, AttemptNote note) {
  metrics_.AddPublishSuccess();
  AttemptVerdict verdict;
  verdict.delivered = true;
  outcomes_.push_back(Outcome{&row, std::move(verdict), Kind::kDelivered, 0, 0, std::move(note)});
}

void ResultWriter::Skipped(const OutboxRow& row) {
  AttemptVerdict verdict;
  verdict.delivered = true;
  outcomes_.push_back(Outcome{&row, std::move(verdict), Kind::kSkipped, 0, 0,
                              NoteOfSettlement(node_id_, "skipped")});
}

void ResultWriter::Failed(const OutboxRow& row, AttemptVerdict verdict, AttemptNote note) {
  metrics_.AddPublishFailure();
  verdict.delivered = false;
  if (first_error_.empty()) first_error_ = verdict.error;
  outcomes_.push_back(Outcome{&row, std::move(verdict), Kind::kFailed, 0, 0, std::move(note)});
}

void ResultWriter::Parked(const OutboxRow& row, AttemptVerdict verdict, int64_t parked_after,
                          AttemptNote note) {
  metrics_.AddPublishFailure();
  verdict.delivered = false;
  if (first_error_.empty()) first_error_ = verdict.error;
  parked_rooms_.insert(row.room_id);
  outcomes_.push_back(
      Outcome{&row, std::move(verdict), Kind::kParked, parked_after, 0, std::move(note)});
}

void ResultWriter::Expired(const OutboxRow& row, int64_t age_ms) {
  AttemptVerdict verdict;
  verdict.error = std::string(kExpiredReason);
  verdict.level = spdlog::level::warn;
  outcomes_.push_back(Outcome{&row, std::move(verdict), Kind::kExpired, 0, age_ms,
                              NoteOfSettlement(node_id_, "expired")});
}

void ResultWriter::HeldBack(const std::string& room_id, const std::string& event_id, uint64_t rows,
                            int64_t now_ms) {
  if (parked_rooms_.count(room_id) != 0) {
    logger_.Debug(Line("rows given back behind a parked row: the next claim takes them")
                      .Add("room_id", room_id)
                      .Add("rows", rows));
    return;
  }
  const bool entered = held_rooms_ != nullptr && held_rooms_->Hold(room_id, now_ms);
  LogLine line = Line("room held back by a failing head row");
  line.Add("room_id", room_id);
  if (!event_id.empty()) line.Add("event_id", event_id);
  line.Add("held_rows", rows);
  logger_.Log(entered ? spdlog::level::info : spdlog::level::debug, line);
}

void ResultWriter::Flush() {
  std::vector<int64_t> published_ids;  // delivered and skipped rows: both are marked published
  std::vector<AttemptNote> published_notes;  // theirs, when every one has a note
  bool all_noted = true;
  size_t skipped = 0;
  std::vector<Outcome> failures;
  std::vector<Outcome> parks;
  for (const Outcome& o : outcomes_) {
    switch (o.kind) {
      case Kind::kSkipped:
        ++skipped;
        [[fallthrough]];
      case Kind::kDelivered:
        published_ids.push_back(o.row->id);
        published_notes.push_back(o.note);
        all_noted = all_noted && !o.note.empty();
        break;
      case Kind::kFailed:
        failures.push_back(o);
        break;
      case Kind::kParked:
      case Kind::kExpired:
        parks.push_back(o);
        break;
    }
  }
  if (!all_noted) published_notes.clear();
  const bool published_marked =
      published_ids.empty() || MarkPublished(published_ids, published_notes);
  const bool failed_marked = failures.empty() || MarkFailures(failures, Kind::kFailed);
  const bool parked_marked = parks.empty() || MarkFailures(parks, Kind::kParked);
  for (const Outcome& o : outcomes_) {
    const bool marked = o.kind == Kind::kDelivered || o.kind == Kind::kSkipped ? published_marked
                        : o.kind == Kind::kFailed                              ? failed_marked
                                                                               : parked_marked;
    LogOutcome(o, marked);
    if (marked) NoteMarked(o);
  }
  if (published_marked) {
    published_ += published_ids.size() - skipped;
    skipped_ += skipped;
  }
  // Failed attempts, marked or not: parks too, expired rows not (they were never attempted).
  failed_ += failures.size() +
             static_cast<size_t>(std::count_if(parks.begin(), parks.end(), [](const Outcome& o) {
               return o.kind == Kind::kParked;
             }));
  outcomes_.clear();
}

// A result the database recorded: the counts of parks and expired rows, and the room it frees.
void ResultWriter::NoteMarked(const Outcome& o) {
  switch (o.kind) {
    case Kind::kFailed:
      return;
    case Kind::kParked:
      ++parked_;
      break;
    case Kind::kExpired:
      ++expired_;
      metrics_.AddExpired(o.row->event_type);
      break;
    case Kind::kSkipped:
      metrics_.AddSkipped(o.row->event_type);
      break;
    case Kind::kDelivered:
      break;
  }
  NoteLeft(o);
}

bool ResultWriter::MarkPublished(const std::vector<int64_t>& ids,
                                 const std::vector<AttemptNote>& notes) {
  auto marked = store_.MarkPublished(token_, ids, notes);
  if (!marked) {
    NoteStoreError(marked.error(), "marking rows published failed");
    if (unwritten_ != nullptr) {
      unwritten_->KeepIds(UnwrittenResults::Kind::kPublished, token_, ids, notes);
    }
    return false;
  }
  CheckCount(marked, ids.size(), "mark_published");
  return true;
}

bool ResultWriter::MarkFailures(const std::vector<Outcome>& failures, Kind kind) {
  std::vector<FailedAttempt> attempts;
  attempts.reserve(failures.size());
  for (const Outcome& o : failures) {
    attempts.push_back(FailedAttempt{o.row->id, o.verdict.error, o.verdict.retry_after.count(),
                                     o.verdict.dropped, o.verdict.pack_size,
                                     o.kind != Kind::kExpired, o.note});
  }
  const bool park = kind == Kind::kParked;
  auto marked = park ? store_.MarkParked(token_, attempts) : store_.MarkFailed(token_, attempts);
  if (!marked) {
    NoteStoreError(marked.error(), park ? "parking rows failed" : "marking rows failed failed");
    if (unwritten_ != nullptr) {
      unwritten_->KeepAttempts(
          park ? UnwrittenResults::Kind::kParked : UnwrittenResults::Kind::kFailed, token_,
          attempts);
    }
    return false;
  }
  CheckCount(marked, attempts.size(), park ? "mark_parked" : "mark_failed");
  return true;
}

void ResultWriter::Release(std::span<const int64_t> ids) {
  if (ids.empty()) {
    return;
  }
  auto released = store_.Release(token_, ids);
  if (!released) {
    NoteStoreError(released.error(), "releasing rows failed");
    if (unwritten_ != nullptr) unwritten_->KeepIds(UnwrittenResults::Kind::kReleased, token_, ids);
    return;
  }
  CheckCount(released, ids.size(), "release");
}

void ResultWriter::Summarize(size_t rooms_held, size_t released) const {
  if (failed_ == 0) {
    return;
  }
  logger_.Warn(Line("outbox round had failures")
                   .Add("failed", static_cast<uint64_t>(failed_))
                   .Add("parked", static_cast<uint64_t>(parked_))
                   .Add("published", static_cast<uint64_t>(published_))
                   .Add("rooms_held", static_cast<uint64_t>(rooms_held))
                   .Add("released", static_cast<uint64_t>(released))
                   .Add("error", first_error_));
}

void ResultWriter::LogOutcome(const Outcome& o, bool marked) {
  const bool skipped = o.kind == Kind::kSkipped;
  const bool delivered = o.kind == Kind::kDelivered || skipped;
  const bool expired = o.kind == Kind::kExpired;
  const bool parked = o.kind == Kind::kParked || expired;
  const int64_t retry_count = o.row->retry_count;
  OutboxEventFields fields;
  fields.node_id = node_id_;
  fields.event_id = o.row->event_id;
  fields.event_type = o.row->event_type;
  fields.room_id = o.row->room_id;
  // After a recorded failure (or park) the store holds retry_count + 1; an expiry is no attempt.
  fields.retry_count = retry_count + (!delivered && !expired && marked ? 1 : 0);
  fields.status = !marked ? "pending" : delivered ? "published" : parked ? "parked" : "pending";
  fields.error = o.verdict.error;
  if (!marked && fields.error.empty()) {
    fields.error = unwritten_ != nullptr
                       ? "result not recorded yet: database error; written when it answers again"
                       : "result not recorded: database error";
  }
  std::string_view message = "outbox event failed";
  spdlog::level::level_enum level = o.verdict.level;
  if (skipped) {
    message = "outbox event skipped";  // the row is marked published: it is never sent
  } else if (delivered) {
    message = "outbox event published";
    if (retry_count > 0) {
      message = "outbox event published after failures";
      level = std::max(level, spdlog::level::info);
    }
  } else if (expired) {
    message = "outbox event expired";  // opt-in and expected: the verdict's level (warn)
  } else if (parked) {
    message = "outbox event parked";
    level = spdlog::level::err;
  } else if (retry_count == 0) {
    level = std::max(level, spdlog::level::warn);  // the row's first failure
  } else {
    level = spdlog::level::debug;  // the first one was logged at warn, the round summary counts
  }
  LogLine line = OutboxEventLine(message, fields);
  if (o.kind == Kind::kParked) line.Add("parked_after", o.parked_after);
  if (expired) line.Add("age_ms", o.age_ms);
  if (delivered && !skipped && retry_count > 0) line.Add("after_failures", retry_count);
  logger_.Log(marked ? level : spdlog::level::err, line);
}

void ResultWriter::NoteLeft(const Outcome& o) {
  if (held_rooms_ == nullptr || !held_rooms_->Release(o.row->room_id)) {
    return;
  }
  logger_.Info(Line("room released")
                   .Add("room_id", o.row->room_id)
                   .Add("event_id", o.row->event_id)
                   .Add("head", o.kind == Kind::kDelivered ? "published"
                                : o.kind == Kind::kSkipped ? "skipped"
                                                           : "parked"));
}

void ResultWriter::CheckCount(const core::Result<size_t>& marked, size_t expected,
                              std::string_view operation) {
  if (marked && *marked < expected) {
    // The lease ran out and another claim holds these rows now; its result counts.
    logger_.Warn(Line("rows were taken over by another claim; result not written")
                     .Add("operation", operation)
                     .Add("rows", static_cast<uint64_t>(expected - *marked)));
  }
}

void ResultWriter::NoteStoreError(const Error& error, std::string_view what) {
  logger_.Error(Line(what).Add("error", error.message));
  if (!store_error_) {
    store_error_ = error;
  }
}

LogLine ResultWriter::Line(std::string_view message) const {
  LogLine line(message);
  line.Add("worker", "room_outbox").Add("node_id", node_id_);
  return line;
}

}  // namespace room_outbox::relay
