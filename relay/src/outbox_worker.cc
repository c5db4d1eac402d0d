#include "outbox_worker.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <utility>
#include <vector>

#include "envelope_codec.h"

namespace room_outbox::relay {
namespace {

// last_error is bounded by the store; the log line and the column stay readable when the text is
// short. Cut on a UTF-8 boundary.
constexpr size_t kMaxErrorBytes = 200;

std::string ShortError(std::string text) {
  if (text.size() <= kMaxErrorBytes) {
    return text;
  }
  size_t cut = kMaxErrorBytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  text.resize(cut);
  return text + "...";
}

std::string FailureText(const PublishOutcome& outcome) {
  std::string text = PublishStatusName(outcome.status);
  if (!outcome.error.empty()) {
    text += ": " + outcome.error;
  }
  return ShortError(std::move(text));
}

// One outcome line, written after the marks so that `status` says what the database holds.
struct OutcomeRecord {
  const OutboxRow* row;
  bool delivered;
  spdlog::level::level_enum level;
  std::string error;
};

}  // namespace

WorkerOptions ToWorkerOptions(const WorkerConfig& config, const std::string& node_id,
                              std::vector<std::string> unpaced_event_types) {
  WorkerOptions o;
  o.node_id = node_id;
  o.poll_interval = config.poll_interval;
  o.batch_size = config.batch_size;
  o.publish_timeout = config.publish_timeout;
  o.max_in_flight = config.max_in_flight;
  o.per_room_order = config.ordering == Ordering::kPerRoom;
  o.lease = config.lease;
  o.room_min_interval = config.room_min_interval;
  o.unpaced_event_types = std::move(unpaced_event_types);
  return o;
}

struct OutboxWorker::Item {
  const OutboxRow* row = nullptr;
  Envelope envelope;
};

OutboxWorker::OutboxWorker(WorkerOptions options, OutboxStore& store, Publisher& publisher,
                           Clock& clock, StopSignal& stop, Metrics& metrics, Logger& logger,
                           std::function<void(std::string_view)> on_status)
    : options_(std::move(options)),
      store_(store),
      publisher_(publisher),
      clock_(clock),
      stop_(stop),
      metrics_(metrics),
      logger_(logger),
      on_status_(std::move(on_status)) {
  // The same guards as the config loader, for callers that build options by hand: no busy loop,
  // no unbounded scan, no unbounded call.
  if (options_.poll_interval.count() <= 0) options_.poll_interval = std::chrono::seconds(1);
  if (options_.batch_size == 0) options_.batch_size = 100;
  if (options_.publish_timeout.count() <= 0) options_.publish_timeout = std::chrono::seconds(3);
  if (options_.max_in_flight == 0) options_.max_in_flight = 1;
  if (options_.lease <= options_.publish_timeout) {
    options_.lease = options_.publish_timeout + options_.lease_margin + std::chrono::seconds(1);
  }
}

RoundResult OutboxWorker::RunRound() { return Round(nullptr); }

RoundResult OutboxWorker::Round(std::unordered_set<int64_t>* attempted) {
  RoundResult result;
  if (stop_.stop_requested()) {
    return result;
  }
  ClaimOptions claim_options;
  claim_options.limit = options_.batch_size;
  claim_options.lease_ms = options_.lease.count();
  claim_options.per_room_order = options_.per_room_order;
  if (attempted == nullptr && options_.per_room_order && options_.room_min_interval.count() > 0) {
    // A round sends a room at most one poll_interval's worth of paced rows; the room's other due
    // rows are scheduled after them, and the next claim takes other rooms' rows meanwhile.
    // (--once keeps whole runs: it ends when nothing is due, so nothing may be scheduled later.)
    claim_options.max_rows_per_room = static_cast<size_t>(
        std::max<int64_t>(1, options_.poll_interval.count() / options_.room_min_interval.count()));
    claim_options.room_pace_ms = options_.room_min_interval.count();
    claim_options.unpaced_event_types = options_.unpaced_event_types;
  }
  // The store's times are the server's; this process keeps durations on its own clock, taken
  // before the claim so that the lease left is never overestimated.
  const int64_t claim_started = clock_.NowMs();
  auto claim = store_.ClaimDue(claim_options);
  if (!claim && claim.error().code == ErrorCode::kAborted) {
    // A deadlock or lock wait timeout that the store's own reruns did not get past: not a
    // database outage; the next round claims again.
    logger_.Debug(LogLine("outbox claim aborted by lock contention")
                      .Add("worker", "room_outbox")
                      .Add("node_id", options_.node_id)
                      .Add("error", claim.error().message));
    return result;
  }
  if (!claim) {
    result.error = claim.error();
    result.store_error = true;
    logger_.Error(LogLine("outbox claim failed")
                      .Add("worker", "room_outbox")
                      .Add("node_id", options_.node_id)
                      .Add("error", claim.error().message));
    metrics_.AddRound(true);
    return result;
  }
  result.claimed = claim->rows.size();
  const int64_t lease_end = claim_started + (claim->lease_until_ms - claim->server_now_ms);
  for (const PacedRoom& room : claim->paced_rooms) {
    logger_.Debug(LogLine("room paced: its later rows are scheduled after this round")
                      .Add("worker", "room_outbox")
                      .Add("node_id", options_.node_id)
                      .Add("room_id", room.room_id)
                      .Add("rows_scheduled", room.rows_scheduled));
    paced_until_ms_ = std::max(paced_until_ms_, clock_.NowMs() + room.paced_for_ms);
  }
  // A short claim is not the end of a backlog when per-room order left rows out of it; an empty
  // one still waits poll_interval, so a selection that keeps nothing cannot spin.
  result.full = result.claimed >= options_.batch_size || (claim->more_due && result.claimed > 0);

  std::vector<Item> items;
  items.reserve(claim->rows.size());
  std::vector<FailedAttempt> failures;
  std::vector<int64_t> released;
  std::vector<OutcomeRecord> records;
  for (const OutboxRow& row : claim->rows) {
    if (attempted != nullptr && attempted->count(row.id) != 0) {
      // Due again within one --once run: leave it for a later run (see Drain). Its room's later
      // rows must wait behind it too; Publish sees the gap through the held-back rule below.
      released.push_back(row.id);
      continue;
    }
    auto envelope = DecodeEnvelope(row.envelope);
    if (!envelope) {
      if (attempted != nullptr) attempted->insert(row.id);
      std::string error = ShortError("undecodable envelope: " + envelope.error().message);
      failures.push_back(FailedAttempt{row.id, error, options_.poll_interval.count()});
      records.push_back(OutcomeRecord{&row, false, spdlog::level::err, error});
      metrics_.AddPublishFailure();
      ++result.undecodable;
      if (!result.error) {
        result.error = Error{ErrorCode::kInvalidArgument, "event " + row.event_id + ": " + error};
      }
      continue;
    }
    items.push_back(Item{&row, std::move(*envelope)});
  }

  // Per-room order: a room whose earlier row of this claim is not being attempted (undecodable or
  // already tried in this --once run) must not have its later rows sent now.
  std::unordered_set<std::string> blocked_rooms;
  if (options_.per_room_order) {
    for (const FailedAttempt& f : failures) {
      for (const OutboxRow& row : claim->rows) {
        if (row.id == f.id) blocked_rooms.insert(row.room_id);
      }
    }
    for (int64_t id : released) {
      for (const OutboxRow& row : claim->rows) {
        if (row.id == id) blocked_rooms.insert(row.room_id);
      }
    }
  }

  // Queues per room (ordering=per_room) or one queue per row (ordering=none), in id order.
  std::vector<std::string> keys;
  std::unordered_map<std::string, std::deque<size_t>> queues;
  std::unordered_map<std::string, uint64_t> held_rows;
  for (size_t i = 0; i < items.size(); ++i) {
    const OutboxRow& row = *items[i].row;
    if (options_.per_room_order && blocked_rooms.count(row.room_id) != 0) {
      released.push_back(row.id);
      ++held_rows[row.room_id];
      continue;
    }
    std::string key = options_.per_room_order ? row.room_id : "#" + std::to_string(i);
    auto [it, inserted] = queues.try_emplace(key);
    if (inserted) keys.push_back(key);
    it->second.push_back(i);
  }
  for (const auto& [room, count] : held_rows) {
    logger_.Warn(LogLine("room held back by a failing head row")
                     .Add("worker", "room_outbox")
                     .Add("node_id", options_.node_id)
                     .Add("room_id", room)
                     .Add("held_rows", count));
    held_back_rooms_.insert(room);
  }
  size_t remaining = 0;
  for (const auto& [key, queue] : queues) remaining += queue.size();

  auto release_all = [&] {
    for (const std::string& key : keys) {
      for (size_t i : queues[key]) released.push_back(items[i].row->id);
      queues[key].clear();
    }
    remaining = 0;
  };
  const bool pacing = options_.per_room_order && options_.room_min_interval.count() > 0;
  {
    // Forget rooms whose last send is older than the pacing interval.
    const int64_t now = clock_.NowMs();
    for (auto it = last_send_ms_.begin(); it != last_send_ms_.end();) {
      if (now - it->second >= options_.room_min_interval.count()) {
        it = last_send_ms_.erase(it);
      } else {
        ++it;
      }
    }
  }

  auto note_store_error = [&](const Error& e, std::string_view what) {
    logger_.Error(LogLine(what)
                      .Add("worker", "room_outbox")
                      .Add("node_id", options_.node_id)
                      .Add("error", e.message));
    if (!result.store_error) {
      result.error = e;
      result.store_error = true;
    }
  };
  auto check_count = [&](const Result<size_t>& marked, size_t expected, std::string_view what) {
    if (marked && *marked < expected) {
      // The lease ran out and another claim holds these rows now; its result counts.
      logger_.Warn(LogLine("rows were taken over by another claim; result not written")
                       .Add("worker", "room_outbox")
                       .Add("node_id", options_.node_id)
                       .Add("operation", what)
                       .Add("rows", static_cast<uint64_t>(expected - *marked)));
    }
  };
  // Writes the results gathered since the last call (one MarkPublished, one MarkFailed) and logs
  // one line per row. Called after every wave, so that a relay killed mid-claim leaves at most
  // its last wave delivered but unmarked (the rows a successor sends again).
  auto flush = [&] {
    std::vector<int64_t> published_ids;
    for (const OutcomeRecord& r : records) {
      if (r.delivered) published_ids.push_back(r.row->id);
    }
    bool published_marked = true;
    if (!published_ids.empty()) {
      auto marked = store_.MarkPublished(claim->token, published_ids);
      if (!marked) {
        published_marked = false;
        note_store_error(marked.error(), "marking rows published failed");
      }
      check_count(marked, published_ids.size(), "mark_published");
    }
    bool failed_marked = true;
    if (!failures.empty()) {
      auto marked = store_.MarkFailed(claim->token, failures);
      if (!marked) {
        failed_marked = false;
        note_store_error(marked.error(), "marking rows failed failed");
      }
      check_count(marked, failures.size(), "mark_failed");
    }
    for (const OutcomeRecord& r : records) {
      const bool marked = r.delivered ? published_marked : failed_marked;
      std::string error = r.error;
      if (!marked && error.empty()) {
        error = "result not recorded: database error";
      }
      OutboxEventFields fields;
      fields.node_id = options_.node_id;
      fields.event_id = r.row->event_id;
      fields.event_type = r.row->event_type;
      fields.room_id = r.row->room_id;
      // After a recorded failure the store holds retry_count + 1.
      fields.retry_count = r.row->retry_count + (!r.delivered && marked ? 1 : 0);
      fields.status = r.delivered && marked ? "published" : "pending";
      fields.error = error;
      logger_.Log(
          marked ? r.level : spdlog::level::err,
          OutboxEventLine(r.delivered ? "outbox event published" : "outbox event failed", fields));
    }
    if (published_marked) result.published += published_ids.size();
    result.failed += failures.size();
    records.clear();
    failures.clear();
  };

  while (remaining > 0) {
    if (stop_.stop_requested()) {
      logger_.Info(LogLine("stop requested: giving back rows not yet attempted")
                       .Add("worker", "room_outbox")
                       .Add("node_id", options_.node_id)
                       .Add("rows", static_cast<uint64_t>(remaining)));
      release_all();
      break;
    }
    const int64_t now = clock_.NowMs();
    const int64_t lease_left = lease_end - now;
    const int64_t usable = lease_left - options_.lease_margin.count();
    const int64_t slots = usable > 0 ? usable / options_.publish_timeout.count() : 0;
    if (slots <= 0) {
      logger_.Warn(LogLine("lease too short for another wave: giving rows back")
                       .Add("worker", "room_outbox")
                       .Add("node_id", options_.node_id)
                       .Add("rows", static_cast<uint64_t>(remaining))
                       .Add("lease_left_ms", lease_left));
      release_all();
      break;
    }
    // A wave is at most what is in flight at once: results are marked after every wave, so a
    // relay killed mid-claim leaves at most max_in_flight rows delivered but unmarked (they are
    // sent again after the lease), whatever the lease and batch size.
    const size_t capacity = options_.max_in_flight;

    std::vector<std::string> wave_keys;
    int64_t earliest_ready = std::numeric_limits<int64_t>::max();
    for (const std::string& key : keys) {
      // A room's next rows of types that are never sent are delivered here, in order: they need
      // no send slot and do not count against the room's pace.
      auto& queue = queues[key];
      while (!queue.empty() && !publisher_.Sends(items[queue.front()].row->event_type)) {
        const OutboxRow& row = *items[queue.front()].row;
        if (attempted != nullptr) attempted->insert(row.id);
        metrics_.AddPublishSuccess();
        records.push_back(OutcomeRecord{&row, true, spdlog::level::debug, ""});
        held_back_rooms_.erase(row.room_id);
        queue.pop_front();
        --remaining;
      }
      if (queue.empty()) continue;
      if (pacing) {
        auto last = last_send_ms_.find(key);
        if (last != last_send_ms_.end()) {
          const int64_t ready_at = last->second + options_.room_min_interval.count();
          if (ready_at > now) {
            earliest_ready = std::min(earliest_ready, ready_at);
            continue;
          }
        }
      }
      if (wave_keys.size() < capacity) wave_keys.push_back(key);
    }
    if (wave_keys.empty()) {
      if (remaining == 0) {
        break;  // only rows that are never sent were left; their results are written below
      }
      // Every room with rows left was sent to less than room_min_interval ago.
      clock_.SleepFor(std::chrono::milliseconds(earliest_ready - now), stop_);
      continue;
    }

    std::vector<size_t> wave;
    std::vector<Envelope> envelopes;
    for (const std::string& key : wave_keys) {
      wave.push_back(queues[key].front());
      queues[key].pop_front();
      envelopes.push_back(items[wave.back()].envelope);
      if (pacing) last_send_ms_[key] = now;
    }
    remaining -= wave.size();
    ++result.waves;
    std::vector<PublishOutcome> outcomes =
        publisher_.PublishMany(envelopes, options_.publish_timeout, options_.max_in_flight);

    for (size_t w = 0; w < wave.size(); ++w) {
      const OutboxRow& row = *items[wave[w]].row;
      if (attempted != nullptr) attempted->insert(row.id);
      PublishOutcome outcome;
      if (w < outcomes.size()) {
        outcome = outcomes[w];
      } else {
        outcome.status = PublishStatus::kUnknown;
        outcome.error = "publisher returned " + std::to_string(outcomes.size()) + " outcomes for " +
                        std::to_string(wave.size()) + " envelopes";
      }
      metrics_.ObservePublishLatency(outcome.latency.count());
      if (outcome.delivered()) {
        metrics_.AddPublishSuccess();
        records.push_back(OutcomeRecord{&row, true, spdlog::level::debug, ""});
        held_back_rooms_.erase(row.room_id);
        continue;
      }
      metrics_.AddPublishFailure();
      const bool rate_limited = outcome.status == PublishStatus::kRateLimited;
      result.rate_limited = result.rate_limited || rate_limited;
      const auto delay = rate_limited
                             ? std::max(options_.poll_interval, options_.rate_limited_retry)
                             : options_.poll_interval;
      std::string error = FailureText(outcome);
      failures.push_back(FailedAttempt{row.id, error, delay.count()});
      records.push_back(OutcomeRecord{
          &row, false,
          outcome.status == PublishStatus::kPermanent ? spdlog::level::err : spdlog::level::warn,
          error});
      if (options_.per_room_order) {
        auto& queue = queues[row.room_id];
        if (!queue.empty()) {
          logger_.Warn(LogLine("room held back by a failing head row")
                           .Add("worker", "room_outbox")
                           .Add("node_id", options_.node_id)
                           .Add("room_id", row.room_id)
                           .Add("event_id", row.event_id)
                           .Add("held_rows", static_cast<uint64_t>(queue.size())));
          held_back_rooms_.insert(row.room_id);
          for (size_t i : queue) released.push_back(items[i].row->id);
          remaining -= queue.size();
          queue.clear();
        }
      }
    }
    flush();
    if (result.store_error) {
      // The database is failing: sending more now would only deliver rows whose results
      // cannot be written.
      release_all();
      break;
    }
    if (result.rate_limited && remaining > 0) {
      logger_.Warn(LogLine("rate limited by IM: giving back the rest of the batch")
                       .Add("worker", "room_outbox")
                       .Add("node_id", options_.node_id)
                       .Add("rows", static_cast<uint64_t>(remaining)));
      release_all();
    }
  }

  flush();
  if (!released.empty()) {
    auto marked = store_.Release(claim->token, released);
    if (!marked) {
      note_store_error(marked.error(), "releasing rows failed");
    }
  }

  result.released = released.size();
  metrics_.SetRoomsHeldBack(static_cast<int64_t>(held_back_rooms_.size()));
  metrics_.AddRound(result.error.has_value());
  RefreshStats();
  logger_.Debug(LogLine("outbox round")
                    .Add("worker", "room_outbox")
                    .Add("node_id", options_.node_id)
                    .Add("claimed", static_cast<uint64_t>(result.claimed))
                    .Add("published", static_cast<uint64_t>(result.published))
                    .Add("failed", static_cast<uint64_t>(result.failed))
                    .Add("released", static_cast<uint64_t>(result.released))
                    .Add("waves", static_cast<uint64_t>(result.waves)));
  return result;
}

void OutboxWorker::RefreshStats() {
  const int64_t now = clock_.NowMs();
  if (stats_refreshed_ && now - last_stats_ms_ < options_.stats_interval.count()) {
    return;
  }
  stats_refreshed_ = true;
  last_stats_ms_ = now;
  auto stats = store_.Stats();
  if (!stats) {
    logger_.Warn(LogLine("outbox stats unavailable")
                     .Add("worker", "room_outbox")
                     .Add("node_id", options_.node_id)
                     .Add("error", stats.error().message));
    return;
  }
  metrics_.SetPending(stats->pending, stats->oldest_pending_age_ms);
}

void OutboxWorker::Run() {
  logger_.Info(
      LogLine("outbox worker started")
          .Add("worker", "room_outbox")
          .Add("node_id", options_.node_id)
          .Add("poll_interval_ms", static_cast<int64_t>(options_.poll_interval.count()))
          .Add("batch_size", static_cast<uint64_t>(options_.batch_size))
          .Add("publish_timeout_ms", static_cast<int64_t>(options_.publish_timeout.count()))
          .Add("max_in_flight", static_cast<uint64_t>(options_.max_in_flight))
          .Add("ordering", options_.per_room_order ? "per_room" : "none"));
  std::chrono::milliseconds backoff = options_.poll_interval;
  const std::chrono::milliseconds max_backoff =
      std::max(options_.max_error_backoff, options_.poll_interval);
  uint64_t consecutive_errors = 0;
  while (!stop_.stop_requested()) {
    RoundResult round = Round(nullptr);
    if (round.store_error) {
      ++consecutive_errors;
      if (consecutive_errors == 1 && on_status_) {
        on_status_("database error, retrying: " + round.error->message);
      }
      logger_.Warn(LogLine("database error: backing off")
                       .Add("worker", "room_outbox")
                       .Add("node_id", options_.node_id)
                       .Add("consecutive_errors", consecutive_errors)
                       .Add("backoff_ms", static_cast<int64_t>(backoff.count())));
      if (clock_.SleepFor(backoff, stop_)) break;
      backoff = std::min(backoff * 2, max_backoff);
      continue;
    }
    if (consecutive_errors > 0) {
      logger_.Info(LogLine("database reachable again")
                       .Add("worker", "room_outbox")
                       .Add("node_id", options_.node_id)
                       .Add("after_errors", consecutive_errors));
      if (on_status_) on_status_("running");
      consecutive_errors = 0;
      backoff = options_.poll_interval;
    }
    if (round.full && !round.rate_limited) {
      continue;  // a backlog drains batch after batch, not one batch per tick
    }
    std::chrono::milliseconds idle = options_.poll_interval;
    if (!round.rate_limited && round.published > 0 && clock_.NowMs() < paced_until_ms_) {
      // A paced room's rows come due one per room_min_interval: claim them as they do, as long
      // as rounds deliver (while IM fails, the head rows wait for their retry anyway).
      idle = std::min(idle, options_.room_min_interval);
    }
    if (clock_.SleepFor(idle, stop_)) break;
  }
  logger_.Info(LogLine("outbox worker stopped")
                   .Add("worker", "room_outbox")
                   .Add("node_id", options_.node_id));
}

DrainResult OutboxWorker::Drain() {
  DrainResult drain;
  std::unordered_set<int64_t> attempted;
  while (true) {
    if (stop_.stop_requested()) {
      drain.stopped = true;
      break;
    }
    const size_t before = attempted.size();
    RoundResult round = Round(&attempted);
    ++drain.rounds;
    drain.published += round.published;
    drain.undecodable += round.undecodable;
    // Only attempts count: rows given back as already tried in this run are not failures again.
    drain.failed += round.failed;
    if (round.store_error) {
      drain.store_error = round.error;
      break;
    }
    if (round.claimed == 0 || attempted.size() == before) {
      break;
    }
    if (round.rate_limited) {
      if (clock_.SleepFor(options_.poll_interval, stop_)) {
        drain.stopped = true;
        break;
      }
    }
  }
  return drain;
}

}  // namespace room_outbox::relay
