// BackgroundPublisher: the thread of `[hook] sync_publish = "background"`.
//
// Commit writes a command's pending rows leased to the command's claim token for the sync lease
// (as the inline sync publish does), then offers them here and returns. This thread publishes
// the offered commands one after the other, in commit order, each message (a row, or with
// pack_max_events > 1 a pack of consecutive rows, sync_packs.h) bounded by
// sync_publish_timeout and all rows of a command by its deadline (lease_start_ms +
// sync_publish_timeout, on the monotonic clock that took lease_start_ms, so a row is never sent
// after its lease would have ended). Delivered rows are marked published with the command's token;
// a row (every row of a pack) that fails or runs out of time is released with that token (due for the relay at once,
// retry_count unchanged), and so is every later row of its room that is still in the queue, so a
// room's later rows never overtake an earlier failed one. Whenever rows are released the relay is
// woken, and so it is when a room's last command here is done while rows of the room that were
// left for the relay meanwhile wait behind it (NoteLeftForRelay).
//
// Per-room order at the door (Offer): when the commit's transaction saw an earlier pending row
// of the room, the rows are taken only if that earlier row is one of the queue's own, i.e. the
// room had rows in the queue before the transaction (View), none of the queue's rows was
// released since, and the room is not being released for a failure. Otherwise they are refused
// and the caller leaves them to the relay, as the inline sync publish does. This assumes the
// room's single writer (one Hook) is the only one committing its events.
//
// The queue is bounded: Reserve, before the commit's transaction, takes a slot or says the queue
// is full (the caller then writes the rows unleased for the relay; nobody waits).
//
// Shutdown (destructor): no new offers; the queued commands are still published while their
// deadlines last (each at most sync_publish_timeout after its commit), what is left is
// released, then the thread is joined. Rows a Release could not reach stay leased; the relay
// takes them when the lease ends, so nothing is lost.
//
// A room whose group refused a message for IM's frequency control is backed off (room_backoff.h):
// while its backoff is open, a command of the room reaching the front of the queue is released
// untried (reason room_refused) with the room's later queued commands, and the relay is woken.
//
// A mark published that fails after IM took the rows is kept in the Hook's LateMarks
// (late_marks.h); this thread writes them on its own connection LateMarks::kFirstRetry after the
// failure, doubling on each failed try to LateMarks::kMaxRetry, between commands or while the
// queue is idle, for as long as the Hook lives.
//
// The thread has its own HookStore (a database connection) and Publisher (an HTTP client),
// drawing on the process-wide IM rate budget like every publisher, and the hook's process-wide
// sync breaker (sync_breaker.h). Reserve, View, Offer and the destructor are called by the
// Hook's caller thread; the log callback and the WakeSender are also used from the background
// thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/publisher.h"
#include "hook_counters.h"
#include "late_marks.h"
#include "room_backoff.h"
#include "room_outbox/envelope.h"
#include "room_outbox/hook.h"
#include "store/hook_store.h"
#include "sync_breaker.h"
#include "sync_packs.h"
#include "wake_sender.h"

namespace room_outbox::internal {

// One pending row of a queued command.
struct BackgroundRow {
  int64_t row_id = 0;
  Envelope envelope;
  std::string envelope_json;  // EncodeEnvelope(envelope): the row as written
};

// A committed command's pending rows, written leased to `token`.
struct BackgroundJob {
  std::string token;
  std::string room_id;
  // lease_start_ms + sync_publish_timeout, in the clock's monotonic milliseconds.
  int64_t deadline_ms = 0;
  std::vector<BackgroundRow> rows;  // in commit order
  bool probe = false;               // the sync breaker admitted this command as its probe
};

// What the queue held of a room before a commit's transaction (see Offer).
struct RoomView {
  bool queued = false;    // rows of the room in the queue, none of them being released
  uint64_t releases = 0;  // how many times the queue had released rows by then
};

class BackgroundPublisher {
 public:
  struct Options {
    size_t capacity = kDefaultBackgroundQueue;  // commands reserved or waiting, not counting the
                                                // one being published
    std::chrono::milliseconds sync_publish_timeout = kDefaultSyncPublishTimeout;
    LogCallback log;
    // Counts each request and each row left for the relay (may be null); outlives the thread.
    HookCounters* counters = nullptr;
    PackLimits packs{};  // its group_id_prefix must outlive the thread
    // The Hook's room refusals, shared with its Commit (may be null: no room is backed off).
    RoomBackoff* room_backoff = nullptr;
    // The Hook's late marks (may be null: a failed mark is only logged).
    LateMarks* late_marks = nullptr;
  };

  // `clock` and `wake` must outlive this object. `clock` is the one the jobs' deadlines are on
  // (the store's that took lease_start_ms); the sync breaker's time too. Starts the thread.
  BackgroundPublisher(Options options, std::unique_ptr<HookStore> store,
                      std::unique_ptr<core::Publisher> publisher,
                      std::shared_ptr<core::ImBreaker> breaker, core::Clock& clock,
                      WakeSender& wake);
  // Publishes or releases what is queued (bounded by the commands' deadlines), then joins.
  ~BackgroundPublisher();
  BackgroundPublisher(const BackgroundPublisher&) = delete;
  BackgroundPublisher& operator=(const BackgroundPublisher&) = delete;

  // A slot for a command about to be committed; false when the queue is full.
  bool Reserve();
  // Gives a reserved slot back (the command was not committed, or goes to the relay).
  void Unreserve();
  // The room as the queue holds it now; take it before the commit's transaction.
  RoomView View(const std::string& room_id) const;
  // Queues a committed command in its reserved slot. `earlier_pending`: the transaction saw an
  // earlier pending row of the room. False: refused for per-room order (the slot is given back);
  // the caller leaves the rows to the relay.
  bool Offer(BackgroundJob job, const RoomView& before, bool earlier_pending);
  // A command of the room was left to the relay (the queue full, the breaker open, refused by
  // Offer) while rows of the room are queued or being published: the relay cannot claim the
  // room's later rows before this queue's are marked or released (per-room order), so the queue
  // wakes the relay once the room has none left here.
  void NoteLeftForRelay(const std::string& room_id);

 private:
  // What the thread does next.
  enum class Work { kJob, kLateMarks, kStop };

  void Run();
  // Waits for a queued command (taken into `job`), due late marks, or the end.
  Work Next(BackgroundJob& job);
  // Publishes one command and hands its rows back (with the room's later queued ones on a
  // failure); wakes the relay when rows were left for it.
  void Process(const BackgroundJob& job);
  // Writes the waiting late marks; schedules the next try while some still wait.
  void WriteLateMarks();
  // Publishes the job's rows in order; returns the ids left for the relay (failed, out of
  // time, held behind an earlier release of the room or the breaker open). `failed_pack`: the
  // pack whose send failed without a definite drop, if any.
  std::vector<int64_t> Publish(const BackgroundJob& job, std::vector<int64_t>& delivered,
                               FailedPack& failed_pack);
  // The job's messages, as the number of rows of each, in order.
  std::vector<size_t> Messages(const BackgroundJob& job) const;
  std::string HeldReason(const BackgroundJob& job) const;
  // One request's outcome, carrying `events` events, to the sync breaker (`cut`: the deadline
  // bounded the call; `probe`: the breaker's probe), the room backoff and the counters.
  void Note(const std::string& room_id, const core::PublishOutcome& outcome, size_t events,
            bool cut, bool probe);
  // The room's rows are the relay's from now on: no later queued row of it may be published.
  // Returns the room's queued jobs, taken out of the queue, to be released.
  std::vector<BackgroundJob> HoldRoom(const std::string& room_id);
  // Marks and releases the rows, counting the released ones as left for the relay; a failed mark
  // schedules the late marks' retry.
  void HandBack(const std::string& token, const std::vector<int64_t>& delivered,
                const std::vector<int64_t>& left, const FailedPack& failed_pack = {});
  // `rows` left untried for `reason` (Options::counters).
  void Count(SyncSkip reason, size_t rows);
  // One command of the room is done; true when it was the room's last one here and rows of the
  // room were left for the relay behind it (NoteLeftForRelay): the relay is to be woken.
  bool Finish(const std::string& room_id);
  void Log(LogLevel level, const std::string& line) const;

  const Options options_;
  std::unique_ptr<HookStore> store_;
  std::unique_ptr<core::Publisher> publisher_;
  std::shared_ptr<core::ImBreaker> breaker_;
  core::Clock& clock_;
  WakeSender& wake_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<BackgroundJob> queue_;
  size_t slots_ = 0;  // reserved + queued
  bool stopping_ = false;
  std::map<std::string, size_t> outstanding_;  // per room: commands queued or being published
  std::set<std::string> held_;                 // rooms whose queued rows are being released
  std::set<std::string> behind_;  // outstanding rooms with rows left for the relay behind them
  uint64_t releases_ = 0;
  // The thread's own: when it next writes the late marks (clock_.SteadyMs; none scheduled when
  // empty) and the delay of the try after.
  std::optional<int64_t> late_due_ms_;
  LateMarkRetry late_retry_;
  std::thread thread_;  // last: started when every member above is ready
};

}  // namespace room_outbox::internal
