#include "support/fake_im_server.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/tencent/usersig.h"

namespace room_outbox::testing {
namespace {

constexpr char kSendPath[] = "/v4/group_open_http_svc/send_group_msg";

int64_t NowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

template <class T>
bool ParseNumber(const std::string& text, T* out) {
  if (text.empty()) {
    return false;
  }
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

std::string ImJson(const char* action, int code, const std::string& info) {
  nlohmann::ordered_json doc;
  doc["ActionStatus"] = action;
  doc["ErrorInfo"] = info;
  doc["ErrorCode"] = code;
  return doc.dump();
}

// Counts a handler as in flight for its whole run, including the answer delay.
class InFlight {
 public:
  InFlight(std::mutex& mu, size_t& in_flight, FakeImStats& stats)
      : mu_(mu), in_flight_(in_flight) {
    std::lock_guard<std::mutex> lock(mu_);
    ++in_flight_;
    stats.max_concurrent = std::max(stats.max_concurrent, in_flight_);
  }
  ~InFlight() {
    std::lock_guard<std::mutex> lock(mu_);
    --in_flight_;
  }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;

 private:
  std::mutex& mu_;
  size_t& in_flight_;
};

// httplib listens with a backlog of 5 (compiled into the library). A client opening more
// connections at once (PublishMany with 8 in flight) overflows it, and the kernel drops SYNs
// that are retried only after a second. Linux lets listen() be called again to raise it.
class WideBacklogServer : public httplib::Server {
 public:
  bool WidenBacklog() { return ::listen(svr_sock_, SOMAXCONN) == 0; }
};

}  // namespace

FakeImServer::FakeImServer(FakeImServerOptions options)
    : options_(std::move(options)), server_(std::make_unique<WideBacklogServer>()) {
  // httplib writes with plain send(); on a connection we shut down, that raises SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  const size_t threads = static_cast<size_t>(std::max(options_.threads, 2));
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // Real IM keeps connections open; so does the fake, for as many requests as the client likes.
  server_->set_keep_alive_max_count(std::numeric_limits<int>::max());
  server_->set_keep_alive_timeout(30);
  // httplib writes headers and body separately; with Nagle on, each answer would wait for the
  // client's delayed ACK (~40ms) and the fake would look far slower than IM.
  server_->set_tcp_nodelay(true);
  server_->Post(kSendPath, [this](const httplib::Request& req, httplib::Response& res) {
    HandleSend(req, res);
  });
  server_->Get("/admin/stats", [this](const httplib::Request&, httplib::Response& res) {
    FakeImStats s = Stats();
    nlohmann::ordered_json doc;
    doc["requests"] = s.requests;
    doc["delivered"] = s.delivered;
    doc["delivered_messages"] = s.delivered_messages;
    doc["unique_event_ids"] = s.unique_event_ids;
    doc["duplicates"] = s.duplicates;
    doc["rejected"] = s.rejected;
    doc["connections"] = s.connections;
    doc["max_concurrent"] = s.max_concurrent;
    doc["deduped"] = s.deduped;
    doc["freq_dropped"] = s.freq_dropped;
    doc["locked_out"] = s.locked_out;
    doc["app_limited"] = s.app_limited;
    {
      std::lock_guard<std::mutex> lock(mu_);
      doc["mode"] = mode_;
    }
    res.set_content(doc.dump() + "\n", "application/json");
  });
  // The recorded requests (options.record_requests), in arrival order: what a test outside this
  // process (hook/gosql) checks delivery and order by.
  server_->Get("/admin/requests", [this](const httplib::Request&, httplib::Response& res) {
    nlohmann::ordered_json doc = nlohmann::ordered_json::array();
    for (const FakeImRequest& r : Requests()) {
      nlohmann::ordered_json request;
      request["group_id"] = r.group_id;
      request["random"] = r.random;
      request["delivered"] = r.answer == FakeImFault::Kind::kOk && !r.deduped;
      request["event_ids"] = EventIds(r.events);
      request["body"] = r.body;
      doc.push_back(std::move(request));
    }
    res.set_content(doc.dump() + "\n", "application/json");
  });
  server_->Post("/admin/mode", [this](const httplib::Request& req, httplib::Response& res) {
    std::string value = req.get_param_value("value");
    if (!SetMode(value)) {
      res.status = 400;
      res.set_content("value must be up or down\n", "text/plain");
      return;
    }
    res.set_content("mode " + value + "\n", "text/plain");
  });
  server_->Post("/admin/reset", [this](const httplib::Request&, httplib::Response& res) {
    Reset();
    res.set_content("reset\n", "text/plain");
  });

  if (options_.port == 0) {
    port_ = server_->bind_to_any_port("127.0.0.1");
  } else if (server_->bind_to_port("127.0.0.1", options_.port)) {
    port_ = options_.port;
  }
  if (port_ <= 0) {
    port_ = 0;
    start_error_ = "cannot bind 127.0.0.1:" + std::to_string(options_.port);
    return;
  }
  if (!static_cast<WideBacklogServer*>(server_.get())->WidenBacklog()) {
    start_error_ = "cannot widen the listen backlog of 127.0.0.1:" + std::to_string(port_);
    port_ = 0;
    return;
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // listen_after_bind accepts connections queued since bind, so requests sent right after the
  // constructor returns are not lost; waiting for is_running() only makes stop() well-defined.
  for (int i = 0; i < 2000 && !server_->is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

FakeImServer::~FakeImServer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();  // wakes handlers sleeping out a delay
  if (thread_.joinable()) {
    server_->stop();
    thread_.join();
  }
}

std::string FakeImServer::endpoint() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}

TencentImOptions FakeImServer::ClientOptions() const {
  TencentImOptions o;
  o.endpoint = endpoint();
  o.sdk_app_id = options_.sdk_app_id;
  o.admin_identifier = options_.identifier;
  o.secret_key = options_.secret_key;
  o.group_id_prefix = options_.group_id_prefix;
  o.requests_per_second = 0;
  return o;
}

void FakeImServer::SetDefaultFault(FakeImFault fault) {
  std::lock_guard<std::mutex> lock(mu_);
  default_fault_ = std::move(fault);
}

void FakeImServer::PushFault(FakeImFault fault) {
  std::lock_guard<std::mutex> lock(mu_);
  call_faults_.push_back(std::move(fault));
}

void FakeImServer::PushFaultForEvent(const std::string& event_id, FakeImFault fault) {
  std::lock_guard<std::mutex> lock(mu_);
  event_faults_[event_id].push_back(std::move(fault));
}

void FakeImServer::PushFaultForGroup(const std::string& group_id, FakeImFault fault) {
  std::lock_guard<std::mutex> lock(mu_);
  group_queued_faults_[group_id].push_back(std::move(fault));
}

void FakeImServer::SetGroupFault(const std::string& group_id, std::optional<FakeImFault> fault) {
  std::lock_guard<std::mutex> lock(mu_);
  if (fault) {
    group_faults_[group_id] = std::move(*fault);
  } else {
    group_faults_.erase(group_id);
  }
}

void FakeImServer::SetGroupChatRate(const std::string& group_id, int messages_per_second) {
  std::lock_guard<std::mutex> lock(mu_);
  group_chat_rate_[group_id] = std::max(0, messages_per_second);
}

void FakeImServer::SetFaultFunction(
    std::function<std::optional<FakeImFault>(const FakeImRequest&)> fn) {
  std::lock_guard<std::mutex> lock(mu_);
  fault_fn_ = std::move(fn);
}

void FakeImServer::ClearFaults() {
  std::lock_guard<std::mutex> lock(mu_);
  default_fault_ = FakeImFault::Ok();
  mode_ = "up";
  call_faults_.clear();
  event_faults_.clear();
  group_queued_faults_.clear();
  group_faults_.clear();
  group_chat_rate_.clear();
  fault_fn_ = nullptr;
}

bool FakeImServer::SetMode(const std::string& mode) {
  if (mode != "up" && mode != "down") {
    return false;
  }
  std::lock_guard<std::mutex> lock(mu_);
  mode_ = mode;
  default_fault_ = mode == "up" ? FakeImFault::Ok() : options_.down_fault;
  return true;
}

std::vector<FakeImRequest> FakeImServer::Requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

std::vector<FakeImRequest> FakeImServer::RequestsFor(const std::string& event_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<FakeImRequest> out;
  for (const FakeImRequest& r : requests_) {
    for (const FakeImEvent& event : r.events) {
      if (event.event_id == event_id) {
        out.push_back(r);
        break;
      }
    }
  }
  return out;
}

std::vector<std::string> FakeImServer::Rejections() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rejections_;
}

FakeImStats FakeImServer::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  FakeImStats s = stats_;
  s.unique_event_ids = delivered_ids_.size();
  s.duplicates = s.delivered - s.unique_event_ids;
  s.connections = remote_ports_.size();
  return s;
}

size_t FakeImServer::MaxRequestsInWindow(std::chrono::milliseconds window) const {
  std::vector<std::chrono::steady_clock::time_point> times;
  {
    std::lock_guard<std::mutex> lock(mu_);
    times = arrivals_;
  }
  std::sort(times.begin(), times.end());
  size_t best = 0;
  size_t first = 0;
  for (size_t last = 0; last < times.size(); ++last) {
    while (times[last] - times[first] >= window) {
      ++first;
    }
    best = std::max(best, last - first + 1);
  }
  return best;
}

bool FakeImServer::WaitForRequests(size_t count, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return arrivals_.size() >= count; });
}

void FakeImServer::Reset() {
  std::lock_guard<std::mutex> lock(mu_);
  requests_.clear();
  arrivals_.clear();
  rejections_.clear();
  delivered_ids_.clear();
  remote_ports_.clear();
  group_window_.clear();
  dedupe_keys_.clear();
  sig_checks_.clear();
  app_window_.clear();
  locked_until_ = {};
  stats_ = FakeImStats{};
}

std::optional<std::string> FakeImServer::ValidateQuery(const httplib::Request& req, int* im_code,
                                                       int64_t* usersig_time,
                                                       uint32_t* url_random) const {
  *im_code = 60002;
  uint64_t app_id = 0;
  if (!ParseNumber(req.get_param_value("sdkappid"), &app_id)) {
    return "query: missing or non-numeric sdkappid";
  }
  if (!ParseNumber(req.get_param_value("random"), url_random)) {
    return "query: random is not a uint32";
  }
  if (req.get_param_value("contenttype") != "json") {
    return "query: contenttype is not json";
  }
  if (!req.has_param("identifier") || !req.has_param("usersig")) {
    return "query: missing identifier or usersig";
  }
  if (app_id != options_.sdk_app_id) {
    *im_code = 70020;
    return "query: unknown sdkappid";
  }
  const std::string identifier = req.get_param_value("identifier");
  if (identifier != options_.identifier) {
    *im_code = 60004;
    return "query: identifier is not the app admin";
  }
  const std::string usersig = req.get_param_value("usersig");
  auto decoded = core::DecodeUserSig(usersig);
  if (!decoded) {
    *im_code = 70003;
    return "usersig: " + decoded.error().message;
  }
  std::string why;
  if (!core::VerifyUserSig(usersig, options_.sdk_app_id, identifier, options_.secret_key,
                           NowSeconds(), &why)) {
    if (why == "usersig expired") {
      *im_code = 70001;
    } else if (why == "usersig sdkappid mismatch") {
      *im_code = 70014;
    } else if (why == "usersig identifier mismatch") {
      *im_code = 70013;
    } else {
      *im_code = 70009;
    }
    return why;
  }
  *usersig_time = decoded->time;
  return std::nullopt;
}

std::optional<std::string> FakeImServer::ParseBody(const std::string& body, FakeImRequest* out,
                                                   int* im_code) const {
  *im_code = 10004;
  nlohmann::json doc = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    *im_code = 60002;
    return "body: not a JSON object";
  }
  auto group = doc.find("GroupId");
  if (group == doc.end() || !group->is_string() || group->get_ref<const std::string&>().empty()) {
    return "body: GroupId missing or not a string";
  }
  out->group_id = group->get<std::string>();
  if (out->group_id.rfind(options_.group_id_prefix, 0) != 0) {
    *im_code = 10015;
    return "body: GroupId lacks the group prefix";
  }
  auto random = doc.find("Random");
  if (random == doc.end() || !random->is_number_unsigned() ||
      random->get<uint64_t>() > std::numeric_limits<uint32_t>::max()) {
    return "body: Random missing or not a uint32";
  }
  out->random = random->get<uint32_t>();
  if (auto priority = doc.find("MsgPriority"); priority != doc.end()) {
    if (!priority->is_string() || (*priority != "High" && *priority != "Normal" &&
                                   *priority != "Low")) {
      return "body: MsgPriority is not High, Normal or Low";
    }
    out->priority = priority->get<std::string>();
  }
  auto msg_body = doc.find("MsgBody");
  if (msg_body == doc.end() || !msg_body->is_array() || msg_body->size() != 1) {
    return "body: MsgBody is not an array of one element";
  }
  const nlohmann::json& element = (*msg_body)[0];
  if (!element.is_object() || element.value("MsgType", "") != "TIMCustomElem") {
    return "body: MsgBody[0].MsgType is not TIMCustomElem";
  }
  auto content = element.find("MsgContent");
  if (content == element.end() || !content->is_object()) {
    return "body: MsgContent missing";
  }
  auto data = content->find("Data");
  if (data == content->end() || !data->is_string()) {
    return "body: MsgContent.Data missing or not a string";
  }
  if (auto why = ParseMessageEvents(data->get<std::string>(), content->value("Desc", ""),
                                    content->value("Ext", ""), &out->events)) {
    return why;
  }
  const FakeImEvent& first = out->events.front();
  out->event_id = first.event_id;
  out->event_type = first.event_type;
  out->room_id = first.room_id;
  out->room_seq = first.room_seq;
  return std::nullopt;
}

void FakeImServer::Reject(httplib::Response& res, int im_code, const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.rejected;
    rejections_.push_back(why);
  }
  res.set_content(ImJson("FAIL", im_code, why), "application/json");
}

FakeImFault FakeImServer::ChooseFault(const FakeImRequest& request) {
  std::function<std::optional<FakeImFault>(const FakeImRequest&)> fn;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto per_event = event_faults_.find(request.event_id);
    if (per_event != event_faults_.end() && !per_event->second.empty()) {
      FakeImFault fault = std::move(per_event->second.front());
      per_event->second.pop_front();
      return fault;
    }
    auto per_group = group_queued_faults_.find(request.group_id);
    if (per_group != group_queued_faults_.end() && !per_group->second.empty()) {
      FakeImFault fault = std::move(per_group->second.front());
      per_group->second.pop_front();
      return fault;
    }
    if (!call_faults_.empty()) {
      FakeImFault fault = std::move(call_faults_.front());
      call_faults_.pop_front();
      return fault;
    }
    fn = fault_fn_;
  }
  // Called without the lock so the function may use the server's own accessors.
  if (fn) {
    if (std::optional<FakeImFault> fault = fn(request)) {
      return *fault;
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (auto standing = group_faults_.find(request.group_id); standing != group_faults_.end()) {
    return standing->second;
  }
  return default_fault_;
}

bool FakeImServer::LockedOut(std::chrono::steady_clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  if (options_.usersig_check_limit <= 0) {
    return false;
  }
  if (now < locked_until_) {
    ++stats_.locked_out;
    return true;
  }
  while (!sig_checks_.empty() && now - sig_checks_.front() >= options_.usersig_check_window) {
    sig_checks_.pop_front();
  }
  sig_checks_.push_back(now);
  if (sig_checks_.size() > static_cast<size_t>(options_.usersig_check_limit)) {
    sig_checks_.clear();
    locked_until_ = now + options_.usersig_lockout;
    ++stats_.locked_out;
    return true;
  }
  return false;
}

bool FakeImServer::OverAppLimit(std::chrono::steady_clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  if (options_.app_limit_per_second <= 0) {
    return false;
  }
  while (!app_window_.empty() && now - app_window_.front() >= std::chrono::seconds(1)) {
    app_window_.pop_front();
  }
  if (app_window_.size() >= static_cast<size_t>(options_.app_limit_per_second)) {
    ++stats_.app_limited;
    return true;
  }
  app_window_.push_back(now);
  return false;
}

FakeImFault::Kind FakeImServer::ApplyTencentRules(FakeImRequest& request) {
  const auto now = request.arrived;
  const auto key = std::make_pair(request.group_id, request.random);
  if (options_.dedupe_window > std::chrono::milliseconds::zero()) {
    auto seen = dedupe_keys_.find(key);
    if (seen != dedupe_keys_.end() && now - seen->second < options_.dedupe_window) {
      request.deduped = true;
      return FakeImFault::Kind::kOk;
    }
  }
  FakeImFault::Kind kind = FakeImFault::Kind::kOk;
  if (options_.group_cap_per_second > 0) {
    const int rank = request.priority == "High" ? 0 : request.priority == "Low" ? 2 : 1;
    auto& window = group_window_[request.group_id];
    while (!window.empty() && now - window.front().first >= std::chrono::seconds(1)) {
      window.pop_front();
    }
    // Messages of lower priority than this one are dropped before it: they do not count.
    int competing = 0;
    for (const auto& [at, other_rank] : window) {
      competing += other_rank <= rank ? 1 : 0;
    }
    if (rank >= 1) {
      auto chat = group_chat_rate_.find(request.group_id);
      competing += chat != group_chat_rate_.end() ? chat->second : 0;
    }
    if (competing >= options_.group_cap_per_second) {
      kind = FakeImFault::Kind::kMsgDropReason;
    } else {
      window.emplace_back(now, rank);
    }
  }
  if (options_.dedupe_window > std::chrono::milliseconds::zero() &&
      (kind == FakeImFault::Kind::kOk || options_.dropped_holds_dedupe_key)) {
    // A long im-stub run must not grow without bound: now and then forget expired keys.
    if (dedupe_keys_.size() >= 4096 && dedupe_keys_.size() % 4096 == 0) {
      std::erase_if(dedupe_keys_, [&](const auto& entry) {
        return now - entry.second >= options_.dedupe_window;
      });
    }
    dedupe_keys_[key] = now;
  }
  return kind;
}

bool FakeImServer::SleepUnlessStopping(std::chrono::milliseconds duration) {
  std::unique_lock<std::mutex> lock(mu_);
  return !cv_.wait_for(lock, duration, [this] { return stopping_; });
}

void FakeImServer::DropConnection(const httplib::Request& req) {
  // httplib does not hand the socket to handlers. The handler runs on the thread that owns the
  // connection, so its fd stays open meanwhile: find it by its two ports and shut it down.
  // httplib's answer then fails to write and the connection closes with nothing sent.
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end;
       it.increment(ec)) {
    int fd = 0;
    if (!ParseNumber(it->path().filename().string(), &fd)) {
      continue;
    }
    sockaddr_in local{};
    sockaddr_in peer{};
    socklen_t local_len = sizeof(local);
    socklen_t peer_len = sizeof(peer);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) != 0 ||
        getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0 ||
        local.sin_family != AF_INET || peer.sin_family != AF_INET) {
      continue;
    }
    if (ntohs(local.sin_port) == port_ && ntohs(peer.sin_port) == req.remote_port) {
      ::shutdown(fd, SHUT_RDWR);
      return;
    }
  }
}

void FakeImServer::HandleSend(const httplib::Request& req, httplib::Response& res) {
  InFlight in_flight(mu_, in_flight_, stats_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.requests;
    remote_ports_.insert(req.remote_port);
  }
  FakeImRequest request;
  request.arrived = std::chrono::steady_clock::now();
  request.remote_port = req.remote_port;
  if (LockedOut(request.arrived)) {
    res.set_content(ImJson("FAIL", 70050,
                           "UserSig verified too often; the account is locked for a while"),
                    "application/json");
    return;
  }
  int im_code = 0;
  if (auto why = ValidateQuery(req, &im_code, &request.usersig_time, &request.url_random)) {
    Reject(res, im_code, *why);
    return;
  }
  if (auto why = ParseBody(req.body, &request, &im_code)) {
    Reject(res, im_code, *why);
    return;
  }
  if (OverAppLimit(request.arrived)) {
    if (SleepUnlessStopping(options_.latency)) {
      res.set_content(ImJson("FAIL", 60007, "REST API calls per second over the app's limit"),
                      "application/json");
    } else {
      res.status = 503;  // shutting down
    }
    return;
  }
  if (options_.record_bodies) {
    request.body = req.body;
  }
  FakeImFault fault = ChooseFault(request);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (fault.kind == FakeImFault::Kind::kOk) {
      fault.kind = ApplyTencentRules(request);
      if (fault.kind == FakeImFault::Kind::kMsgDropReason) {
        fault.info = "MsgFreqCtrl";
      }
    } else if (fault.kind == FakeImFault::Kind::kMsgDropReason &&
               options_.dedupe_window > std::chrono::milliseconds::zero() &&
               options_.dropped_holds_dedupe_key) {
      // An injected frequency-control drop holds its dedupe key like a capped one.
      dedupe_keys_[std::make_pair(request.group_id, request.random)] = request.arrived;
    }
    request.answer = fault.kind;
    arrivals_.push_back(request.arrived);
    if (options_.record_requests) {
      requests_.push_back(request);
    }
  }
  cv_.notify_all();

  if (!SleepUnlessStopping(options_.latency + fault.delay)) {
    res.status = 503;
    return;  // shutting down
  }
  switch (fault.kind) {
    case FakeImFault::Kind::kOk: {
      nlohmann::ordered_json doc;
      doc["ActionStatus"] = "OK";
      doc["ErrorInfo"] = "";
      doc["ErrorCode"] = 0;
      doc["MsgTime"] = NowSeconds();
      {
        std::lock_guard<std::mutex> lock(mu_);
        doc["MsgSeq"] = next_msg_seq_++;
        if (request.deduped) {
          ++stats_.deduped;
        } else {
          ++stats_.delivered_messages;
          stats_.delivered += request.events.size();
          for (const FakeImEvent& event : request.events) delivered_ids_.insert(event.event_id);
        }
      }
      res.set_content(doc.dump(), "application/json");
      return;
    }
    case FakeImFault::Kind::kImError:
      res.set_content(ImJson("FAIL", fault.code, fault.info), "application/json");
      return;
    case FakeImFault::Kind::kHttpStatus:
      res.status = fault.code;
      res.set_content("<html><body>" + std::to_string(fault.code) + "</body></html>",
                      "text/html");
      return;
    case FakeImFault::Kind::kNotJson:
      res.set_content("<html><body>upstream says hello</body></html>", "text/html");
      return;
    case FakeImFault::Kind::kMsgDropReason: {
      nlohmann::ordered_json doc;
      doc["ActionStatus"] = "OK";
      doc["ErrorInfo"] = "";
      doc["ErrorCode"] = 0;
      doc["MsgTime"] = NowSeconds();
      doc["MsgSeq"] = 0;
      doc["MsgDropReason"] = fault.info;
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++stats_.freq_dropped;
      }
      res.set_content(doc.dump(), "application/json");
      return;
    }
    case FakeImFault::Kind::kOversizedBody:
      res.set_content(std::string(1 << 20, ' '), "application/json");
      return;
    case FakeImFault::Kind::kDropConnection:
      DropConnection(req);
      return;
  }
}

}  // namespace room_outbox::testing
