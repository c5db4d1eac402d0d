#include "background_publisher.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "sync_hand_back.h"

namespace room_outbox::internal {
namespace {

constexpr const char* kRoomHeld = "an earlier event of the room was left to the relay";
constexpr const char* kBreakerOpen = "IM failing, breaker open";
constexpr const char* kOutOfTime = "the sync lease ran out";
constexpr const char* kRoomRefused =
    "the room's group refused IM frequency control, the room is backed off";

// The metrics' reason for a row left untried with `reason`.
SyncSkip SkipOf(const std::string& reason) {
  if (reason == kBreakerOpen) return SyncSkip::kBreakerOpen;
  if (reason == kOutOfTime) return SyncSkip::kOutOfTime;
  if (reason == kRoomHeld) return SyncSkip::kRoomOrder;
  if (reason == kRoomRefused) return SyncSkip::kRoomRefused;
  return SyncSkip::kCommandFailed;
}

std::vector<int64_t> RowIds(const BackgroundJob& job) {
  std::vector<int64_t> ids;
  ids.reserve(job.rows.size());
  for (const BackgroundRow& row : job.rows) {
    ids.push_back(row.row_id);
  }
  return ids;
}

}  // namespace

BackgroundPublisher::BackgroundPublisher(Options options, std::unique_ptr<HookStore> store,
                                         std::unique_ptr<core::Publisher> publisher,
                                         std::shared_ptr<core::ImBreaker> breaker,
                                         core::Clock& clock, WakeSender& wake)
    : options_(std::move(options)),
      store_(std::move(store)),
      publisher_(std::move(publisher)),
      breaker_(std::move(breaker)),
      clock_(clock),
      wake_(wake) {
  thread_ = std::thread([this] { Run(); });
}

BackgroundPublisher::~BackgroundPublisher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

bool BackgroundPublisher::Reserve() {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_ || slots_ >= options_.capacity) {
    return false;
  }
  ++slots_;
  return true;
}

void BackgroundPublisher::Unreserve() {
  std::lock_guard<std::mutex> lock(mu_);
  if (slots_ > 0) --slots_;
}

RoomView BackgroundPublisher::View(const std::string& room_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return RoomView{outstanding_.count(room_id) > 0 && held_.count(room_id) == 0, releases_};
}

bool BackgroundPublisher::Offer(BackgroundJob job, const RoomView& before, bool earlier_pending) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    // The earlier pending row is the queue's own only when the room was in the queue before the
    // transaction looked and nothing was released since.
    const bool ours =
        before.queued && before.releases == releases_ && held_.count(job.room_id) == 0;
    if (stopping_ || (earlier_pending && !ours)) {
      if (slots_ > 0) --slots_;
      if (outstanding_.count(job.room_id) > 0) behind_.insert(job.room_id);
      return false;
    }
    ++outstanding_[job.room_id];
    queue_.push_back(std::move(job));
  }
  // After unlocking: a woken thread that found the mutex still held would block at once and
  // hand the CPU back, two switches on the Commit's path.
  cv_.notify_one();
  return true;
}

void BackgroundPublisher::Run() {
  BackgroundJob job;
  for (;;) {
    switch (Next(job)) {
      case Work::kJob:
        Process(job);
        break;
      case Work::kLateMarks:
        WriteLateMarks();
        break;
      case Work::kStop:
        return;
    }
  }
}

void BackgroundPublisher::Process(const BackgroundJob& job) {
  std::vector<int64_t> delivered;
  FailedPack failed_pack;
  std::vector<int64_t> left = Publish(job, delivered, failed_pack);
  std::vector<BackgroundJob> later;
  if (!left.empty()) {
    later = HoldRoom(job.room_id);
  }
  HandBack(job.token, delivered, left, failed_pack);
  for (const BackgroundJob& held : later) {
    HandBack(held.token, {}, RowIds(held));
    Count(SyncSkip::kRoomOrder, held.rows.size());
  }
  bool wake = !left.empty();
  for (size_t i = 0; i <= later.size(); ++i) {
    wake = Finish(job.room_id) || wake;
  }
  if (wake) {
    wake_.Notify();
  }
}

void BackgroundPublisher::WriteLateMarks() {
  LateMarks& late = *options_.late_marks;
  auto written = late.Write(*store_, SIZE_MAX);
  if (written) {
    late_retry_.Succeeded();
  }
  if (late.empty()) {
    late_due_ms_.reset();
    return;
  }
  // Still waiting: the write failed, or a Commit was writing some of them meanwhile.
  const std::chrono::milliseconds delay = late_retry_.Failed();
  late_due_ms_ = clock_.SteadyMs() + delay.count();
  if (!written) {
    Log(LogLevel::kWarn,
        "late marks not written, trying again: rows=" + std::to_string(late.waiting()) +
            " next_retry_ms=" + std::to_string(delay.count()) +
            " error=" + written.error().message);
  }
}

void BackgroundPublisher::NoteLeftForRelay(const std::string& room_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (outstanding_.count(room_id) > 0) behind_.insert(room_id);
}

BackgroundPublisher::Work BackgroundPublisher::Next(BackgroundJob& job) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    // Due late marks first: a few short UPDATEs, and their rows' leases are running out.
    const int64_t late_wait_ms =
        late_due_ms_ ? *late_due_ms_ - clock_.SteadyMs() : std::numeric_limits<int64_t>::max();
    if (late_wait_ms <= 0) {
      return Work::kLateMarks;
    }
    if (!queue_.empty()) {
      job = std::move(queue_.front());
      queue_.pop_front();
      if (slots_ > 0) --slots_;
      return Work::kJob;
    }
    if (stopping_) {
      return Work::kStop;  // everything was handed back; the Hook tries its late marks once more
    }
    if (late_due_ms_) {
      cv_.wait_for(lock, std::chrono::milliseconds(late_wait_ms));
    } else {
      cv_.wait(lock);
    }
  }
}

std::string BackgroundPublisher::HeldReason(const BackgroundJob& job) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (held_.count(job.room_id) > 0) {
      return kRoomHeld;
    }
  }
  if (options_.room_backoff != nullptr && options_.room_backoff->BackedOff(job.room_id)) {
    return kRoomRefused;
  }
  // Another command's failures may have opened the breaker since this one was admitted.
  if (!job.probe && breaker_->is_open()) {
    return kBreakerOpen;
  }
  return "";
}

std::vector<size_t> BackgroundPublisher::Messages(const BackgroundJob& job) const {
  std::vector<PackCandidate> candidates;
  candidates.reserve(job.rows.size());
  for (const BackgroundRow& row : job.rows) {
    candidates.push_back(PackCandidate{row.envelope.event_id, row.envelope_json});
  }
  return SplitIntoPacks(candidates, job.room_id, options_.packs);
}

std::vector<int64_t> BackgroundPublisher::Publish(const BackgroundJob& job,
                                                  std::vector<int64_t>& delivered,
                                                  FailedPack& failed_pack) {
  std::vector<int64_t> left;
  std::string reason = HeldReason(job);
  bool probing = job.probe;
  size_t begin = 0;
  for (size_t events : Messages(job)) {
    const size_t end = begin + events;
    const BackgroundRow& row = job.rows[begin];
    const std::chrono::milliseconds remaining(job.deadline_ms - clock_.SteadyMs());
    if (reason.empty() && remaining.count() <= 0) {
      reason = kOutOfTime;
    }
    if (!reason.empty()) {
      for (size_t i = begin; i < end; ++i) left.push_back(job.rows[i].row_id);
      Count(SkipOf(reason), events);
      begin = end;
      continue;
    }
    core::PublishMessage message{row.row_id, 0, row.envelope, row.envelope_json, {}, {}};
    for (size_t i = begin + 1; i < end; ++i) {
      message.rest.push_back(core::PackedEvent{&job.rows[i].envelope, job.rows[i].envelope_json});
    }
    const std::chrono::milliseconds call_timeout =
        std::min(options_.sync_publish_timeout, remaining);
    core::PublishOutcome outcome = publisher_->Publish(message, call_timeout);
    // A call the command's deadline cut well short proves nothing about IM when it times out.
    const bool cut = call_timeout < options_.sync_publish_timeout * 9 / 10;
    Note(job.room_id, outcome, events, cut, probing);
    probing = false;
    for (size_t i = begin; i < end; ++i) {
      (outcome.delivered() ? delivered : left).push_back(job.rows[i].row_id);
    }
    begin = end;
    if (outcome.delivered()) {
      continue;
    }
    if (events > 1 && !outcome.definite_drop) {
      failed_pack = FailedPack{row.row_id, events};
    }
    reason = "an earlier event of this command failed";
    Log(LogLevel::kWarn,
        "background publish failed, left pending for the relay: event_id=" + row.envelope.event_id +
            " room_id=" + row.envelope.room_id +
            (events > 1 ? " events=" + std::to_string(events) : "") +
            " status=" + core::PublishStatusName(outcome.status) + " error=" + outcome.error);
  }
  if (probing) {
    breaker_->CancelProbe();  // the probe made no request
  }
  // A held or backed-off room's commands are not logged one by one (its backoff logged once).
  if (!left.empty() && left.size() == job.rows.size() && reason != kRoomHeld &&
      reason != kRoomRefused) {
    Log(LogLevel::kInfo, "background publish skipped, left for the relay: room_id=" + job.room_id +
                             " reason=" + reason);
  }
  return left;
}

void BackgroundPublisher::Note(const std::string& room_id, const core::PublishOutcome& outcome,
                               size_t events, bool cut, bool probe) {
  NoteSyncOutcome(*breaker_, outcome, cut, probe, clock_.SteadyMs(), options_.log);
  if (options_.room_backoff != nullptr) {
    NoteRoomOutcome(*options_.room_backoff, room_id, outcome, options_.log);
  }
  if (options_.counters != nullptr) options_.counters->AddSyncPublish(outcome, events);
}

std::vector<BackgroundJob> BackgroundPublisher::HoldRoom(const std::string& room_id) {
  std::lock_guard<std::mutex> lock(mu_);
  held_.insert(room_id);
  ++releases_;
  std::vector<BackgroundJob> taken;
  auto keep = std::stable_partition(queue_.begin(), queue_.end(),
                                    [&](const BackgroundJob& j) { return j.room_id != room_id; });
  for (auto it = keep; it != queue_.end(); ++it) {
    taken.push_back(std::move(*it));
  }
  queue_.erase(keep, queue_.end());
  slots_ -= std::min(slots_, taken.size());
  return taken;
}

void BackgroundPublisher::Count(SyncSkip reason, size_t rows) {
  if (options_.counters != nullptr) options_.counters->AddSyncSkipped(reason, rows);
}

void BackgroundPublisher::HandBack(const std::string& token, const std::vector<int64_t>& delivered,
                                   const std::vector<int64_t>& left, const FailedPack& failed_pack) {
  if (options_.counters != nullptr) options_.counters->AddLeftToRelay(left.size());
  const bool mark_failed = HandBackSyncRows(*store_, token, delivered, left, "background publish",
                                            options_.log, options_.late_marks, failed_pack);
  if (mark_failed && options_.late_marks != nullptr && !late_due_ms_) {
    late_due_ms_ = clock_.SteadyMs() + late_retry_.Failed().count();
  }
}

bool BackgroundPublisher::Finish(const std::string& room_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = outstanding_.find(room_id);
  if (it == outstanding_.end()) {
    return false;
  }
  if (--it->second > 0) {
    return false;
  }
  outstanding_.erase(it);
  held_.erase(room_id);
  return behind_.erase(room_id) > 0;
}

void BackgroundPublisher::Log(LogLevel level, const std::string& line) const {
  if (options_.log) {
    options_.log(level, line);
  }
}

}  // namespace room_outbox::internal
