#include "hook_impl.h"

#include <atomic>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "commit_checks.h"
#include "commit_guards.h"
#include "core/claim_token.h"
#include "hook_counters.h"
#include "hook_options_defaults.h"
#include "late_marks.h"
#include "lost_commit.h"
#include "room_backoff.h"
#include "sync_hand_back.h"
#include "sync_publish.h"
#include "sync_skip.h"

namespace room_outbox::internal {
namespace {

// Connection-class failures before COMMIT was sent: the server rolled the transaction back,
// so running the command again on a new connection cannot write it twice. A deadlock victim is
// rolled back too.
bool RolledBackRetryable(const Error& error) {
  return error.code == ErrorCode::kUnavailable || error.code == ErrorCode::kAborted;
}

class HookImpl final : public Hook {
 public:
  HookImpl(const HookOptions& options, std::unique_ptr<HookStore> store,
           std::unique_ptr<core::Publisher> publisher, std::unique_ptr<core::Clock> clock,
           std::shared_ptr<core::ImBreaker> sync_breaker, BackgroundParts background,
           std::shared_ptr<core::AppBudgetMember> app_budget)
      : app_budget_(std::move(app_budget)),
        clock_(std::move(clock)),
        options_(WithDefaults(options)),
        store_(std::move(store)),
        publisher_(std::move(publisher)),
        sync_breaker_(sync_breaker ? std::move(sync_breaker) : MakeSyncBreaker()),
        wake_(options_.wake_socket) {
    if (options_.sync_publish == SyncPublishMode::kBackground && background.store &&
        background.publisher) {
      background_ = std::make_unique<BackgroundPublisher>(
          BackgroundPublisher::Options{options_.background_queue, options_.sync_publish_timeout,
                                       options_.log, &counters_, Packs(), &room_backoff_,
                                       &late_marks_},
          std::move(background.store), std::move(background.publisher), sync_breaker_, *clock_,
          wake_);
    }
  }

  // The background publisher first: it finishes or hands back its rows, then joins. Marks still
  // waiting get one last attempt (without it the relay sends their rows again).
  ~HookImpl() override {
    background_.reset();
    WriteLateMarks("as the hook closes", LateMarks::kMaxRows);
  }

  CommitResult Commit(const Command& command, const std::vector<Event>& events,
                      const CallerStatements& caller_statements) override {
    const auto start = std::chrono::steady_clock::now();
    CommitResult result = CommitOnce(command, events, caller_statements);
    counters_.AddCommit(result.status);
    counters_.ObserveCommitDuration(std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - start));
    return result;
  }

  HookMetrics Snapshot() const {
    HookMetrics metrics = counters_.Snapshot();
    metrics.sync_breaker_open = sync_breaker_->is_open();
    metrics.late_marks_waiting = late_marks_.waiting();
    return metrics;
  }

 private:
  // Commit, refused while another Commit of this Hook runs.
  CommitResult CommitOnce(const Command& command, const std::vector<Event>& events,
                          const CallerStatements& caller_statements) {
    // A second Commit while one runs (from its statements callback, or from another thread)
    // would reuse the connection the first holds: its BEGIN would commit the outer transaction.
    if (committing_.exchange(true)) {
      CommitResult refused;
      refused.error = Error{ErrorCode::kInvalidArgument,
                            "Commit refused: a Commit is already running on this Hook (called "
                            "from its statements callback, or from another thread); "
                            "command_id=" +
                                command.command_id};
      return refused;
    }
    CommitResult result = CommitAlone(command, events, caller_statements);
    committing_.store(false);
    return result;
  }

  // Commit, with no other Commit of this Hook running.
  CommitResult CommitAlone(const Command& command, const std::vector<Event>& events,
                           const CallerStatements& caller_statements) {
    CommitResult result;
    if (Status valid = CheckCommand(command, events, options_.tencent_im.group_id_prefix,
                                    options_.tencent_im.skip_event_types);
        !valid.ok()) {
      result.error = valid.error();
      return result;
    }
    auto prepared =
        PrepareCommit(options_, *publisher_, command, events, clock_->NowMs(), scratch_);
    if (!prepared) {
      result.error = prepared.error();
      return result;
    }
    WriteLateMarks("before a commit", LateMarks::kWritesPerCommit);
    ChooseSyncMode(*prepared);
    if (prepared->request.sync_lease.count() > 0) {
      AddEnvelopes(*prepared, options_, command, events);  // for the sync publish
    }
    ProbeGuard probe(*sync_breaker_, prepared->mode == SyncMode::kProbe);
    QueueSlot slot(background_.get(), prepared->background);
    auto write = Write(prepared->request, caller_statements);
    if (!write) {
      result.error = write.error();
      Log(LogLevel::kError, "commit failed: command_id=" + command.command_id +
                                " room_id=" + command.room_id + " error=" + write.error().message);
      return result;
    }
    if (write->outcome == CommitOutcome::kDuplicate) {
      result.status = CommitStatus::kDuplicate;
      Log(LogLevel::kInfo, "duplicate command ignored: command_id=" + command.command_id);
      return result;
    }
    if (write->outcome == CommitOutcome::kCommitLost &&
        !ResolveLostCommit(*store_, command.command_id, *write, result, options_.log)) {
      return result;
    }
    result.status = CommitStatus::kCommitted;
    Deliver(*prepared, *write, probe, slot, result);
    return result;
  }

  // The marks earlier sync publishes could not write (late_marks.h), up to `max_writes`
  // statements on the Commit's connection, one attempt: a failure keeps them for later and never
  // fails the Commit (a connection it found dead is replaced by the Commit's own first call).
  void WriteLateMarks(const char* when, size_t max_writes) {
    if (late_marks_.empty()) {
      return;
    }
    auto written = late_marks_.Write(*store_, max_writes);
    if (!written) {
      Log(LogLevel::kInfo, std::string("late marks not written ") + when +
                               ", kept: rows=" + std::to_string(late_marks_.waiting()) +
                               " error=" + written.error().message);
      return;
    }
    Log(LogLevel::kInfo, std::string("late marks written ") + when +
                             ": rows=" + std::to_string(*written) +
                             " waiting=" + std::to_string(late_marks_.waiting()));
  }

  // Whether this commit's pending rows get a sync publish, inline or in the background: then
  // they are written leased to a new claim token. Skipped (off, the room backed off, the sync
  // breaker open, the background queue full), they are written with no lease: due for the relay
  // at once, no Release needed.
  void ChooseSyncMode(PreparedCommit& prepared) {
    CommitRequest& request = prepared.request;
    if (request.sync_lease.count() == 0) {
      return;  // nothing pending
    }
    prepared.mode = AdmitSyncPublish(request.command.room_id);
    if (prepared.mode == SyncMode::kPublish || prepared.mode == SyncMode::kProbe) {
      if (options_.sync_publish != SyncPublishMode::kBackground) {
        request.token = core::NewClaimToken();
        return;
      }
      if (background_ && background_->Reserve()) {
        prepared.background = true;
        prepared.room = background_->View(request.command.room_id);
        request.token = core::NewClaimToken();
        return;
      }
      if (prepared.mode == SyncMode::kProbe) {
        sync_breaker_->CancelProbe();
      }
      prepared.mode = SyncMode::kQueueFull;
    }
    request.sync_lease = std::chrono::milliseconds(0);
  }

  SyncMode AdmitSyncPublish(const std::string& room_id) {
    if (options_.sync_publish == SyncPublishMode::kOff) {
      return SyncMode::kOff;
    }
    // Before the breaker: a backed-off room must not take the breaker's probe.
    if (room_backoff_.BackedOff(room_id)) {
      return SyncMode::kRoomRefused;
    }
    switch (sync_breaker_->Admit(clock_->SteadyMs())) {
      case core::ImBreaker::Admission::kAllow:
        return SyncMode::kPublish;
      case core::ImBreaker::Admission::kProbe:
        return SyncMode::kProbe;
      case core::ImBreaker::Admission::kReject:
        break;
    }
    return SyncMode::kBreakerSkipped;
  }

  // CommitCommand, run once more when the first try failed before COMMIT was sent with a
  // connection-class error (the store reconnects on its next call). Never more than twice.
  core::Result<CommitWrite> Write(const CommitRequest& request,
                                  const CallerStatements& statements) {
    auto write = store_->CommitCommand(request, statements);
    if (!write && RolledBackRetryable(write.error())) {
      Log(LogLevel::kInfo, "commit rolled back before COMMIT, trying once more: command_id=" +
                               request.command.command_id + " error=" + write.error().message);
      write = store_->CommitCommand(request, statements);
    }
    return write;
  }

  // One EventDelivery per event, then the sync publish of the pending ones (inline, or handed
  // to the background publisher).
  void Deliver(const PreparedCommit& prepared, const CommitWrite& write, ProbeGuard& probe,
               QueueSlot& slot, CommitResult& result) {
    const auto& rows = prepared.request.rows;
    std::vector<size_t> pending;
    pending.reserve(rows.size());
    result.events.reserve(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const bool skipped = rows[i].published;
      result.events.push_back(EventDelivery{
          rows[i].event_id, skipped ? DeliveryState::kSkipped : DeliveryState::kPending, ""});
      if (!skipped) {
        pending.push_back(i);
      }
    }
    counters_.AddEventsCommitted(pending.size());
    if (pending.empty()) {
      return;
    }
    if (const char* reason = SkippedReason(prepared.mode)) {
      // Written unleased: the relay has them already, by no id of ours (the store need not
      // read the ids of unleased rows back, hook_store.h).
      for (const size_t i : pending) {
        result.events[i].error = reason;
      }
      counters_.AddSyncSkipped(SkipOf(prepared.mode), pending.size());
      counters_.AddLeftToRelay(pending.size());
      if (background_) background_->NoteLeftForRelay(prepared.request.command.room_id);
      wake_.Notify();
      return;
    }
    if (write.row_ids.size() != rows.size()) {
      // The store broke its contract; leave every row to the relay (the lease ends soon).
      for (const size_t i : pending) {
        result.events[i].error = "sync publish skipped: store returned no row ids";
      }
      counters_.AddLeftToRelay(pending.size());
      return;
    }
    std::vector<SyncItem> items;
    items.reserve(pending.size());
    for (const size_t i : pending) {
      items.push_back(SyncItem{i, write.row_ids[i]});
    }
    // One deadline for the whole command: what does not fit goes to the relay.
    const int64_t deadline_ms = write.lease_start_ms + options_.sync_publish_timeout.count();
    if (prepared.background) {
      Enqueue(prepared, items, write, deadline_ms, probe, slot, result);
      return;
    }
    SyncPublish(prepared, items, write, deadline_ms, probe, result);
  }

  // Hands the command's rows to the background publisher (kQueued), or, when per-room order
  // refuses them there, releases them to the relay as the inline sync publish would.
  void Enqueue(const PreparedCommit& prepared, const std::vector<SyncItem>& items,
               const CommitWrite& write, int64_t deadline_ms, ProbeGuard& probe, QueueSlot& slot,
               CommitResult& result) {
    BackgroundJob job{prepared.request.token,
                      prepared.request.command.room_id,
                      deadline_ms,
                      {},
                      prepared.mode == SyncMode::kProbe};
    std::vector<int64_t> ids;
    for (const SyncItem& item : items) {
      job.rows.push_back(BackgroundRow{item.row_id, prepared.envelopes[item.index],
                                       prepared.request.rows[item.index].envelope});
      ids.push_back(item.row_id);
    }
    slot.Taken();  // Offer takes the slot or gives it back
    if (background_->Offer(std::move(job), prepared.room, write.earlier_pending)) {
      probe.Disarm();  // the background publisher records or cancels the probe
      for (const SyncItem& item : items) {
        result.events[item.index].state = DeliveryState::kQueued;
      }
      return;
    }
    for (const SyncItem& item : items) {
      result.events[item.index].error = kEarlierPending;
    }
    counters_.AddSyncSkipped(SyncSkip::kRoomOrder, ids.size());
    counters_.AddLeftToRelay(ids.size());
    HandBack(prepared.request.token, {}, ids);
    wake_.Notify();
  }

  // The inline sync publish (sync_publish.h), then the marks and releases of its rows.
  void SyncPublish(const PreparedCommit& prepared, const std::vector<SyncItem>& items,
                   const CommitWrite& write, int64_t deadline_ms, ProbeGuard& probe,
                   CommitResult& result) {
    InlineSyncPublish sync(*publisher_, *sync_breaker_, *clock_, options_.sync_publish_timeout,
                           options_.log, &counters_, Packs(), &room_backoff_);
    const SyncRows rows =
        sync.Publish(prepared.envelopes, prepared.request.rows, items, deadline_ms,
                     write.earlier_pending, prepared.mode == SyncMode::kProbe, result.events);
    if (rows.probe_recorded) {
      probe.Disarm();
    }
    HandBackSyncRows(*store_, prepared.request.token, rows.delivered, rows.left, "sync publish",
                     options_.log, &late_marks_, rows.failed_pack);
    counters_.AddLeftToRelay(rows.left.size());
    if (!rows.left.empty()) {
      wake_.Notify();
    }
  }

  PackLimits Packs() const {
    return PackLimits{options_.tencent_im.pack_max_events, options_.tencent_im.max_body_bytes,
                      options_.tencent_im.group_id_prefix};
  }

  void HandBack(const std::string& token, const std::vector<int64_t>& delivered,
                const std::vector<int64_t>& left) {
    HandBackSyncRows(*store_, token, delivered, left, "sync publish", options_.log, &late_marks_);
  }

  void Log(LogLevel level, const std::string& line) const {
    if (options_.log) {
      options_.log(level, line);
    }
  }

  // The process's share of the app's IM budget while this Hook sends (app_budget_membership.h);
  // it outlives the publishers that draw on it.
  std::shared_ptr<core::AppBudgetMember> app_budget_;
  // First: the store, the publishers and the background thread may read it until they are gone.
  std::unique_ptr<core::Clock> clock_;
  HookOptions options_;
  std::unique_ptr<HookStore> store_;
  std::unique_ptr<core::Publisher> publisher_;
  std::shared_ptr<core::ImBreaker> sync_breaker_;
  WakeSender wake_;
  HookCounters counters_;  // before background_, whose thread counts into it
  // Marks the sync publish could not write; written by Commit and the background thread.
  LateMarks late_marks_{&counters_, options_.log};
  // The rooms IM's frequency control refused, shared by the inline and background publish.
  RoomBackoff room_backoff_{*clock_};
  std::unique_ptr<BackgroundPublisher> background_;  // kBackground only
  CommitScratch scratch_;  // Commit's reused buffers (a Hook is used by one thread at a time)
  std::atomic<bool> committing_{false};  // a Commit is running
};

}  // namespace

std::unique_ptr<Hook> MakeHook(const HookOptions& options, std::unique_ptr<HookStore> store,
                               std::unique_ptr<core::Publisher> publisher,
                               std::unique_ptr<core::Clock> clock,
                               std::shared_ptr<core::ImBreaker> sync_breaker,
                               BackgroundParts background,
                               std::shared_ptr<core::AppBudgetMember> app_budget) {
  return std::make_unique<HookImpl>(options, std::move(store), std::move(publisher),
                                    std::move(clock), std::move(sync_breaker),
                                    std::move(background), std::move(app_budget));
}

}  // namespace room_outbox::internal

namespace room_outbox {

HookMetrics Hook::Metrics() const {
  const auto* impl = dynamic_cast<const internal::HookImpl*>(this);
  return impl != nullptr ? impl->Snapshot() : HookMetrics{};
}

}  // namespace room_outbox
