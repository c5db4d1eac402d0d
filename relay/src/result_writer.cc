#include "result_writer.h"

#include <utility>

namespace room_outbox::relay {

ResultWriter::ResultWriter(OutboxStore& store, Metrics& metrics, Logger& logger,
                           std::string node_id, std::string token)
    : store_(store),
      metrics_(metrics),
      logger_(logger),
      node_id_(std::move(node_id)),
      token_(std::move(token)) {}

void ResultWriter::Delivered(const OutboxRow& row) {
  metrics_.AddPublishSuccess();
  AttemptVerdict verdict;
  verdict.delivered = true;
  outcomes_.push_back(Outcome{&row, std::move(verdict)});
}

void ResultWriter::Failed(const OutboxRow& row, AttemptVerdict verdict) {
  metrics_.AddPublishFailure();
  verdict.delivered = false;
  outcomes_.push_back(Outcome{&row, std::move(verdict)});
}

void ResultWriter::Flush() {
  std::vector<int64_t> published_ids;
  std::vector<Outcome> failures;
  for (const Outcome& o : outcomes_) {
    if (o.verdict.delivered) {
      published_ids.push_back(o.row->id);
    } else {
      failures.push_back(o);
    }
  }
  const bool published_marked = published_ids.empty() || MarkPublished(published_ids);
  const bool failed_marked = failures.empty() || MarkFailed(failures);
  for (const Outcome& o : outcomes_) {
    LogOutcome(o, o.verdict.delivered ? published_marked : failed_marked);
  }
  if (published_marked) published_ += published_ids.size();
  failed_ += failures.size();
  outcomes_.clear();
}

bool ResultWriter::MarkPublished(const std::vector<int64_t>& ids) {
  auto marked = store_.MarkPublished(token_, ids);
  if (!marked) {
    NoteStoreError(marked.error(), "marking rows published failed");
    return false;
  }
  CheckCount(marked, ids.size(), "mark_published");
  return true;
}

bool ResultWriter::MarkFailed(const std::vector<Outcome>& failures) {
  std::vector<FailedAttempt> attempts;
  attempts.reserve(failures.size());
  for (const Outcome& o : failures) {
    attempts.push_back(FailedAttempt{o.row->id, o.verdict.error, o.verdict.retry_after.count(),
                                     o.verdict.dropped});
  }
  auto marked = store_.MarkFailed(token_, attempts);
  if (!marked) {
    NoteStoreError(marked.error(), "marking rows failed failed");
    return false;
  }
  CheckCount(marked, attempts.size(), "mark_failed");
  return true;
}

void ResultWriter::Release(std::span<const int64_t> ids) {
  if (ids.empty()) {
    return;
  }
  auto released = store_.Release(token_, ids);
  if (!released) {
    NoteStoreError(released.error(), "releasing rows failed");
    return;
  }
  CheckCount(released, ids.size(), "release");
}

void ResultWriter::LogOutcome(const Outcome& o, bool marked) {
  const bool delivered = o.verdict.delivered;
  OutboxEventFields fields;
  fields.node_id = node_id_;
  fields.event_id = o.row->event_id;
  fields.event_type = o.row->event_type;
  fields.room_id = o.row->room_id;
  // After a recorded failure the store holds retry_count + 1.
  fields.retry_count = o.row->retry_count + (!delivered && marked ? 1 : 0);
  fields.status = delivered && marked ? "published" : "pending";
  fields.error = o.verdict.error;
  if (!marked && fields.error.empty()) {
    fields.error = "result not recorded: database error";
  }
  logger_.Log(marked ? o.verdict.level : spdlog::level::err,
              OutboxEventLine(delivered ? "outbox event published" : "outbox event failed", fields));
}

void ResultWriter::CheckCount(const Result<size_t>& marked, size_t expected,
                              std::string_view operation) {
  if (marked && *marked < expected) {
    // The lease ran out and another claim holds these rows now; its result counts.
    logger_.Warn(LogLine("rows were taken over by another claim; result not written")
                     .Add("worker", "room_outbox")
                     .Add("node_id", node_id_)
                     .Add("operation", operation)
                     .Add("rows", static_cast<uint64_t>(expected - *marked)));
  }
}

void ResultWriter::NoteStoreError(const Error& error, std::string_view what) {
  logger_.Error(LogLine(what)
                    .Add("worker", "room_outbox")
                    .Add("node_id", node_id_)
                    .Add("error", error.message));
  if (!store_error_) {
    store_error_ = error;
  }
}

}  // namespace room_outbox::relay
