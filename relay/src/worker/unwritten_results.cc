#include "worker/unwritten_results.h"

#include <utility>

#include "worker/worker_log.h"

namespace room_outbox::relay {

const char* UnwrittenKindName(UnwrittenResults::Kind kind) {
  switch (kind) {
    case UnwrittenResults::Kind::kPublished:
      return "published";
    case UnwrittenResults::Kind::kFailed:
      return "failed";
    case UnwrittenResults::Kind::kParked:
      return "parked";
    case UnwrittenResults::Kind::kReleased:
      return "released";
  }
  return "released";
}

void UnwrittenResults::KeepIds(Kind kind, const std::string& token, std::span<const int64_t> ids,
                               std::span<const AttemptNote> notes) {
  if (ids.empty()) return;
  batches_.push_back(Batch{kind,
                           token,
                           std::vector<int64_t>(ids.begin(), ids.end()),
                           {},
                           std::vector<AttemptNote>(notes.begin(), notes.end())});
  rows_ += ids.size();
  Bound();
}

void UnwrittenResults::KeepAttempts(Kind kind, const std::string& token,
                                    std::span<const FailedAttempt> attempts) {
  if (attempts.empty()) return;
  batches_.push_back(
      Batch{kind, token, {}, std::vector<FailedAttempt>(attempts.begin(), attempts.end()), {}});
  rows_ += attempts.size();
  Bound();
}

void UnwrittenResults::Bound() {
  while (rows_ > kMaxUnwrittenRows && batches_.size() > 1) {
    rows_ -= batches_.front().size();
    dropped_ += batches_.front().size();
    batches_.erase(batches_.begin());
  }
}

core::Result<void> UnwrittenResults::WriteTo(RelayStore& store, Logger& logger,
                                             std::string_view node_id) {
  size_t written = 0;
  while (!batches_.empty()) {
    const Batch& batch = batches_.front();
    core::Result<size_t> counted = Write(store, batch);
    if (!counted) {
      return core::Fail(counted.error().code, std::string("writing results kept since the "
                                                          "database went away: ") +
                                                  counted.error().message);
    }
    if (*counted < batch.size()) {
      logger.Warn(WorkerLine(node_id,
                             "kept results of rows another claim holds now, or already "
                             "written: not written again")
                      .Add("operation", UnwrittenKindName(batch.kind))
                      .Add("rows", static_cast<uint64_t>(batch.size() - *counted)));
    }
    written += batch.size();
    rows_ -= batch.size();
    batches_.erase(batches_.begin());
  }
  if (written > 0 || dropped_ > 0) {
    logger.Info(WorkerLine(node_id, "results kept while the database was away written")
                    .Add("rows", static_cast<uint64_t>(written))
                    .Add("dropped", static_cast<uint64_t>(dropped_)));
    dropped_ = 0;
  }
  return {};
}

core::Result<size_t> UnwrittenResults::Write(RelayStore& store, const Batch& batch) const {
  switch (batch.kind) {
    case Kind::kPublished:
      return store.MarkPublished(batch.token, batch.ids, batch.notes);
    case Kind::kFailed:
      return store.MarkFailed(batch.token, batch.attempts);
    case Kind::kParked:
      return store.MarkParked(batch.token, batch.attempts);
    case Kind::kReleased:
      return store.Release(batch.token, batch.ids);
  }
  return store.Release(batch.token, batch.ids);
}

}  // namespace room_outbox::relay
