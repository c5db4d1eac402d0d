// FakeImServer: a local stand-in for Tencent IM's send_group_msg, for integration tests, the
// demo and benchmarks (im-stub). It listens on 127.0.0.1 (port 0 = any free port) with
// cpp-httplib in a background thread.
//
// For every POST /v4/group_open_http_svc/send_group_msg it checks what real IM checks:
//   query: sdkappid, identifier (the configured admin), usersig (VerifyUserSig with the
//          configured secret), random (a uint32), contenttype=json;
//   body:  GroupId (with the configured prefix), Random (uint32), MsgBody[0] a TIMCustomElem
//          in the single form (Data an envelope, Desc = event_type, Ext = event_id) or the
//          RoomEventBatch form of a packed message (support/fake_im_message.h); a malformed
//          one is rejected 10004 and none of its events counted.
// A message carries one event or (packed) several: each of them is delivered, in order, when the
// message is; against the group cap, the dedupe window and the app limit it is ONE message.
// A request failing a check is "rejected" and answered like IM would (see Reject codes below).
// A valid one is recorded and answered per the fault policy:
//   1. the next fault queued for its event_id (PushFaultForEvent), else
//   2. the next fault queued for its GroupId (PushFaultForGroup), else
//   3. the next fault queued for any call (PushFault), else
//   4. the fault function's answer, if set and it returns one, else
//   5. the group's standing fault (SetGroupFault), else
//   6. the default fault (SetDefaultFault; initially Ok).
// Every answer waits options.latency + fault.delay first (interrupted when the server stops).
//
// Tencent's own behaviour, each off by default so plain tests see a plain server
// (docs/relay.md, failure scopes):
//   - group_cap_per_second > 0: each group takes at most that many messages per second (IM: 40)
//     from all senders together; what is over is answered OK + "MsgDropReason":"MsgFreqCtrl" and
//     not delivered (none of a packed message's events). Lower priorities go first: a High message competes only with the High
//     messages delivered in the last second, Normal with High + Normal + the group's simulated
//     audience chat (SetGroupChatRate, Normal priority), Low with everything.
//   - dedupe_window > 0 (IM: 5 min): a message whose (GroupId, Random) equals one answered OK in
//     the window is answered OK again but not delivered: counted as deduped. With
//     dropped_holds_dedupe_key (the pessimistic reading of the docs), a frequency-dropped
//     message holds its key too.
//   - usersig_check_limit > 0: after that many signature checks (one per request) within
//     usersig_check_window, every request is answered 70050 for usersig_lockout (IM: 60 s).
//   - app_limit_per_second > 0: the app's REST call limit (IM: 200/s by default), for every
//     sender together: a valid request arriving when that many were admitted within the last
//     second is answered 60007 after options.latency, counted as app_limited and neither recorded
//     nor counted against the window (it never reached the fault policy).
//
// Admin routes (for the demo and scripts): GET /admin/stats -> {"requests":..,"delivered":..,
// "delivered_messages":..,
// "unique_event_ids":..,"duplicates":..,"rejected":..,"connections":..,"max_concurrent":..,
// "deduped":..,"freq_dropped":..,"locked_out":..,"app_limited":..,"mode":"up"|"down"};
// GET /admin/requests -> the recorded valid requests in arrival order, each {"group_id","random",
// "delivered" (answered OK, not deduped),"event_ids","body" ("" unless record_bodies)};
// POST /admin/mode?value=up|down (down = options.down_fault as default); POST /admin/reset clears records and counters. (httplib wants a Content-Length on every POST:
// use `curl -d "" URL`, not a bare `curl -X POST URL`.)
//
// Rejection codes: bad or missing query field -> 60002; sdkappid not the configured one ->
// 70020; identifier not the configured admin -> 60004; usersig: undecodable -> 70003, expired
// -> 70001, made for another app/identifier -> 70014/70013, HMAC mismatch (wrong key) -> 70009;
// malformed body -> 10004.
//
// The constructor ignores SIGPIPE process-wide: dropping a connection makes the server's own
// write fail, which must not kill the test process.
// Thread-safe; the destructor stops the server and joins its threads.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "room_outbox/options.h"
#include "support/fake_im_message.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace room_outbox::testing {

// How the fake answers one valid request.
struct FakeImFault {
  enum class Kind {
    kOk,              // 200 {"ActionStatus":"OK","ErrorCode":0,"MsgTime":..,"MsgSeq":..}
    kImError,         // 200 {"ActionStatus":"FAIL","ErrorCode":code,"ErrorInfo":info}
    kHttpStatus,      // HTTP `code` with an HTML body (e.g. 502)
    kDropConnection,  // read the request, then close the connection without answering
    kNotJson,         // 200 with an HTML body
    kMsgDropReason,   // 200 OK + "MsgDropReason": info (IM frequency control; not delivered)
    kOversizedBody,   // 200 with a 1 MiB body (a misbehaving proxy); not delivered
  };
  Kind kind = Kind::kOk;
  int code = 0;
  std::string info;
  std::chrono::milliseconds delay{0};  // extra wait before answering

  static FakeImFault Ok() { return {}; }
  static FakeImFault ImError(int code, std::string info = "fake im error") {
    return {Kind::kImError, code, std::move(info), {}};
  }
  static FakeImFault HttpStatus(int status) { return {Kind::kHttpStatus, status, "", {}}; }
  static FakeImFault DropConnection() { return {Kind::kDropConnection, 0, "", {}}; }
  static FakeImFault NotJson() { return {Kind::kNotJson, 0, "", {}}; }
  static FakeImFault FreqCtrl() { return {Kind::kMsgDropReason, 0, "MsgFreqCtrl", {}}; }
  static FakeImFault OversizedBody() { return {Kind::kOversizedBody, 0, "", {}}; }
  // This fault, answered after `d`.
  FakeImFault After(std::chrono::milliseconds d) const {
    FakeImFault copy = *this;
    copy.delay = d;
    return copy;
  }
};

// One valid send_group_msg request as the fake saw it. event_id .. room_seq are its first
// event's (a packed message's Ext names that event); `events` holds every event it carries.
struct FakeImRequest {
  std::string event_id;
  std::string event_type;
  std::string room_id;
  int64_t room_seq = 0;
  std::vector<FakeImEvent> events;  // in message order; one for the single form
  std::string group_id;
  std::string priority;     // the body's MsgPriority; "" when absent (IM then uses Normal)
  uint32_t random = 0;      // the body's Random
  uint32_t url_random = 0;  // the query's random
  int64_t usersig_time = 0;  // TLS.time of the usersig it carried
  std::string body;          // raw body bytes (empty unless options.record_bodies)
  std::chrono::steady_clock::time_point arrived;
  int remote_port = 0;       // identifies the client's TCP connection
  FakeImFault::Kind answer = FakeImFault::Kind::kOk;
  bool deduped = false;     // answered OK as a duplicate of an earlier message; not delivered
};

struct FakeImStats {
  size_t requests = 0;          // send_group_msg POSTs received, valid or not
  size_t delivered = 0;           // events of the messages answered OK (without MsgDropReason)
  size_t delivered_messages = 0;  // those messages (a packed one counts once)
  size_t unique_event_ids = 0;    // distinct event_ids among the delivered events
  size_t duplicates = 0;        // delivered - unique_event_ids
  size_t rejected = 0;          // failed a query, signature or body check
  size_t connections = 0;       // distinct client TCP connections seen
  size_t max_concurrent = 0;    // most send_group_msg requests being handled at once
  size_t deduped = 0;           // answered OK as duplicates (dedupe_window), not delivered
  size_t freq_dropped = 0;      // answered OK + MsgDropReason by the group cap (or a fault)
  size_t locked_out = 0;        // answered 70050 by the UserSig lock-out
  size_t app_limited = 0;       // answered 60007 by the app-wide limit (app_limit_per_second)
};

struct FakeImServerOptions {
  uint64_t sdk_app_id = 1400012345;
  std::string identifier = "administrator";
  std::string secret_key = "fake-im-secret-key-5bd2850fff3ecb11d7c8";
  std::string group_id_prefix;  // GroupId must start with it
  int port = 0;                 // 0: any free port
  int threads = 64;             // handler threads (each keep-alive connection holds one)
  std::chrono::milliseconds latency{0};  // added to every answer
  bool record_requests = true;  // keep a FakeImRequest per valid request
  bool record_bodies = true;    // keep raw bodies in those records
  FakeImFault down_fault = FakeImFault::ImError(10002, "internal error (im-stub down)");
  // Tencent's per-group cap in messages per second; 0: off. IM's is 40.
  int group_cap_per_second = 0;
  // Tencent's dedupe on (GroupId, Random); 0: off. IM's is 5 minutes.
  std::chrono::milliseconds dedupe_window{0};
  bool dropped_holds_dedupe_key = true;
  // The 70050 lock-out: 0 checks: off.
  int usersig_check_limit = 0;
  std::chrono::milliseconds usersig_check_window{60000};
  std::chrono::milliseconds usersig_lockout{60000};
  // The app's calls per second, all senders together, beyond which IM answers 60007; 0: off.
  int app_limit_per_second = 0;
};

class FakeImServer {
 public:
  explicit FakeImServer(FakeImServerOptions options = {});
  ~FakeImServer();
  FakeImServer(const FakeImServer&) = delete;
  FakeImServer& operator=(const FakeImServer&) = delete;

  // False when binding failed; start_error() says why.
  bool running() const { return port_ > 0; }
  const std::string& start_error() const { return start_error_; }
  int port() const { return port_; }
  std::string endpoint() const;  // "http://127.0.0.1:PORT"
  const FakeImServerOptions& options() const { return options_; }

  // Publisher options aimed at this server: endpoint, sdk_app_id, identifier, secret key and
  // prefix; no request budget.
  TencentImOptions ClientOptions() const;

  // Fault policy; see the file comment for the order.
  void SetDefaultFault(FakeImFault fault);
  void PushFault(FakeImFault fault);
  void PushFaultForEvent(const std::string& event_id, FakeImFault fault);
  void PushFaultForGroup(const std::string& group_id, FakeImFault fault);
  // Every request to the group gets `fault` (below queued faults and the function); nullopt
  // removes it.
  void SetGroupFault(const std::string& group_id, std::optional<FakeImFault> fault);
  // Simulated audience chat in the group (Normal priority, per second) for the group cap.
  void SetGroupChatRate(const std::string& group_id, int messages_per_second);
  void SetFaultFunction(std::function<std::optional<FakeImFault>(const FakeImRequest&)> fn);
  // Back to answering Ok, with no queued faults and no function.
  void ClearFaults();
  // "up" sets the default fault to Ok, "down" to options.down_fault.
  bool SetMode(const std::string& mode);

  std::vector<FakeImRequest> Requests() const;
  // The valid requests that carried `event_id` (alone or in a pack).
  std::vector<FakeImRequest> RequestsFor(const std::string& event_id) const;
  std::vector<std::string> Rejections() const;  // one short reason per rejected request
  FakeImStats Stats() const;
  // Most valid requests that arrived within any `window` (e.g. 1s) interval.
  size_t MaxRequestsInWindow(std::chrono::milliseconds window) const;
  // Waits until `count` valid requests were recorded; false on timeout.
  bool WaitForRequests(size_t count, std::chrono::milliseconds timeout) const;
  void Reset();

 private:
  void HandleSend(const httplib::Request& req, httplib::Response& res);
  std::optional<std::string> ValidateQuery(const httplib::Request& req, int* im_code,
                                           int64_t* usersig_time, uint32_t* url_random) const;
  std::optional<std::string> ParseBody(const std::string& body, FakeImRequest* out,
                                       int* im_code) const;
  FakeImFault ChooseFault(const FakeImRequest& request);
  void Reject(httplib::Response& res, int im_code, const std::string& why);
  bool SleepUnlessStopping(std::chrono::milliseconds duration);
  void DropConnection(const httplib::Request& req);
  bool LockedOut(std::chrono::steady_clock::time_point now);
  // The app-wide limit: true (and counted) when the request at `now` is over it.
  bool OverAppLimit(std::chrono::steady_clock::time_point now);
  // For a would-be-OK answer: the dedupe window and the group cap. Returns the final kind (kOk,
  // or kMsgDropReason when capped) and sets request.deduped. Called with mu_ held.
  FakeImFault::Kind ApplyTencentRules(FakeImRequest& request);

  FakeImServerOptions options_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  std::string start_error_;

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;  // request arrivals and stopping
  bool stopping_ = false;
  FakeImFault default_fault_;
  std::string mode_ = "up";
  std::deque<FakeImFault> call_faults_;
  std::map<std::string, std::deque<FakeImFault>> event_faults_;
  std::map<std::string, std::deque<FakeImFault>> group_queued_faults_;
  std::map<std::string, FakeImFault> group_faults_;
  std::map<std::string, int> group_chat_rate_;
  // Group cap: per group, the arrival times and priority ranks (0 High, 1 Normal, 2 Low) of the
  // messages delivered in the last second.
  std::map<std::string, std::deque<std::pair<std::chrono::steady_clock::time_point, int>>>
      group_window_;
  // Dedupe: (GroupId, Random) -> when it was answered OK.
  std::map<std::pair<std::string, uint32_t>, std::chrono::steady_clock::time_point> dedupe_keys_;
  std::deque<std::chrono::steady_clock::time_point> sig_checks_;
  // App-wide limit: when each request admitted in the last second arrived.
  std::deque<std::chrono::steady_clock::time_point> app_window_;
  std::chrono::steady_clock::time_point locked_until_{};
  std::function<std::optional<FakeImFault>(const FakeImRequest&)> fault_fn_;
  std::vector<FakeImRequest> requests_;
  std::vector<std::chrono::steady_clock::time_point> arrivals_;
  std::vector<std::string> rejections_;
  std::unordered_set<std::string> delivered_ids_;
  std::set<int> remote_ports_;
  FakeImStats stats_;
  size_t in_flight_ = 0;
  uint64_t next_msg_seq_ = 1;
};

}  // namespace room_outbox::testing
