#include "core/tencent/tencent_im_publisher.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <deque>
#include <initializer_list>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/tencent/curl_error.h"
#include "core/tencent/curl_handles.h"
#include "core/tencent/im_breaker.h"
#include "core/tencent/im_request.h"
#include "core/tencent/im_response.h"
#include "core/tencent/process_rate_budget.h"
#include "core/tencent/usersig.h"

namespace room_outbox {
namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// IM answers are a few hundred bytes; a huge body means something else is answering.
constexpr size_t kMaxResponseBytes = 64 * 1024;
// A TLS handshake to IM takes well under this; beyond it the host is unreachable.
constexpr milliseconds kMaxConnectTimeout{3000};
// Longest single wait in the transfer loop, so new work is picked up promptly.
constexpr milliseconds kMaxPollWait{100};
constexpr milliseconds kDefaultTimeout{3000};

const char kEndpointKey[] = "tencent_im.endpoint";

struct ParsedEndpoint {
  std::string base;    // the endpoint without trailing slashes
  std::string target;  // "POST host:port", for error messages
};

bool IsLoopbackHost(std::string host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  std::transform(host.begin(), host.end(), host.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (host == "localhost") {
    return true;
  }
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    return IN6_IS_ADDR_LOOPBACK(&v6);
  }
  return false;
}

Result<ParsedEndpoint> ParseEndpoint(const std::string& endpoint) {
  auto invalid = [&](const std::string& why) {
    return Fail(ErrorCode::kInvalidArgument, "\"" + endpoint + "\": " + why);
  };
  CurlUrlPtr url{curl_url()};
  if (!url) {
    return Fail(ErrorCode::kInternal, "curl_url: out of memory");
  }
  if (CURLUcode rc = curl_url_set(url.get(), CURLUPART_URL, endpoint.c_str(), 0);
      rc != CURLUE_OK) {
    return invalid(curl_url_strerror(rc));
  }
  auto part = [&](CURLUPart which, unsigned int flags) -> std::optional<std::string> {
    char* raw = nullptr;
    if (curl_url_get(url.get(), which, &raw, flags) != CURLUE_OK || raw == nullptr) {
      return std::nullopt;
    }
    CurlStringPtr owned{raw};
    return std::string(owned.get());
  };
  auto scheme = part(CURLUPART_SCHEME, 0);
  auto host = part(CURLUPART_HOST, 0);
  auto port = part(CURLUPART_PORT, CURLU_DEFAULT_PORT);
  if (!host || host->empty()) {
    return invalid("has no host");
  }
  if (part(CURLUPART_QUERY, 0) || part(CURLUPART_FRAGMENT, 0)) {
    return invalid("must not have a query or fragment");
  }
  if (part(CURLUPART_USER, 0) || part(CURLUPART_PASSWORD, 0)) {
    return invalid("must not carry credentials");
  }
  if (scheme == "http") {
    if (!IsLoopbackHost(*host)) {
      return invalid("plain http is accepted only for a loopback host; use https");
    }
  } else if (scheme != "https") {
    return invalid("scheme must be https");
  }
  ParsedEndpoint out;
  out.base = endpoint;
  while (!out.base.empty() && out.base.back() == '/') {
    out.base.pop_back();
  }
  out.target = "POST " + *host + ":" + port.value_or("?");
  return out;
}

Result<void> FirstError(std::initializer_list<Result<void>> results) {
  for (const Result<void>& r : results) {
    if (!r) {
      return r;
    }
  }
  return {};
}

// One easy handle of the pool and the state of the transfer it carries.
struct Slot {
  CurlPtr easy;
  std::string response;
  bool too_large = false;
  bool busy = false;
  size_t item = 0;
  std::array<char, CURL_ERROR_SIZE> errbuf{};
};

// One message of a PublishMany call.
struct Item {
  std::string body;
  PublishOutcome outcome;
  bool done = false;
  bool started = false;
  bool sig_renewed = false;
  bool probe = false;  // the breaker let it through as its half-open probe
  SteadyClock::time_point start;
  SteadyClock::time_point deadline;
};

// libcurl write callback: collects the answer up to kMaxResponseBytes. Never throws into C.
size_t CollectBody(char* data, size_t size, size_t count, void* user) noexcept {
  auto* slot = static_cast<Slot*>(user);
  size_t n = size * count;
  if (slot->response.size() + n > kMaxResponseBytes) {
    slot->too_large = true;
    return 0;  // makes libcurl stop with CURLE_WRITE_ERROR
  }
  try {
    slot->response.append(data, n);
  } catch (...) {
    return 0;
  }
  return n;
}

bool DroppedAfterSend(CURLcode code) {
  return code == CURLE_GOT_NOTHING || code == CURLE_RECV_ERROR || code == CURLE_PARTIAL_FILE ||
         code == CURLE_HTTP2_STREAM || code == CURLE_WEIRD_SERVER_REPLY;
}

long ClampMs(milliseconds ms) { return static_cast<long>(std::max<int64_t>(1, ms.count())); }

// What an outcome says about the app as a whole (see ImBreaker::Verdict): only IM's own JSON
// answers about the message prove the app works; no answer proves nothing.
ImBreaker::Verdict BreakerVerdict(const PublishOutcome& outcome) {
  if (outcome.scope == FailureScope::kApp) {
    return ImBreaker::Verdict::kAppFailure;
  }
  if (outcome.http_status == 200 &&
      (outcome.status == PublishStatus::kPublished || outcome.im_error_code != 0 ||
       outcome.definite_drop)) {
    return ImBreaker::Verdict::kHealthy;
  }
  return ImBreaker::Verdict::kInconclusive;
}

class TencentImPublisher final : public Publisher {
 public:
  TencentImPublisher(const TencentImOptions& options, ParsedEndpoint endpoint,
                     TencentImClocks clocks, CurlSlistPtr headers, CurlMultiPtr multi)
      : options_(options),
        endpoint_(std::move(endpoint)),
        skip_(options.skip_event_types.begin(), options.skip_event_types.end()),
        unix_seconds_(std::move(clocks.unix_seconds)),
        sig_cache_(options.sdk_app_id, options.admin_identifier, options.secret_key,
                   options.usersig_ttl, unix_seconds_),
        monotonic_(std::move(clocks.monotonic)),
        breaker_(options.breaker_cooldown),
        headers_(std::move(headers)),
        multi_(std::move(multi)),
        url_random_(SeedFromDevice()) {
    if (options.requests_per_second > 0) {
      budget_ = ProcessRateBudget(endpoint_.base, options.sdk_app_id, options.requests_per_second);
    }
  }

  PublishOutcome Publish(const PublishMessage& message, milliseconds timeout) override {
    std::vector<PublishOutcome> outcomes =
        PublishMany(std::span<const PublishMessage>(&message, 1), timeout, 1);
    return std::move(outcomes.front());
  }

  bool breaker_open() const override { return breaker_.is_open(); }

  void ReloadSecretKey(std::string secret_key) override {
    // Waits for a call in progress (each is bounded by its timeout); the next one signs anew.
    std::lock_guard<std::timed_mutex> lock(mu_);
    options_.secret_key = std::move(secret_key);
    sig_cache_ = UserSigCache(options_.sdk_app_id, options_.admin_identifier,
                              options_.secret_key, options_.usersig_ttl, unix_seconds_);
  }

  bool Sends(std::string_view event_type) const override {
    return skip_.count(std::string(event_type)) == 0;
  }

  std::vector<PublishOutcome> PublishMany(std::span<const PublishMessage> messages,
                                          milliseconds timeout, size_t max_in_flight) override;

 private:
  static uint32_t SeedFromDevice() {
    try {
      return std::random_device{}();
    } catch (...) {
      return static_cast<uint32_t>(SteadyClock::now().time_since_epoch().count());
    }
  }

  Result<void> EnsureSlots(size_t count);
  Result<void> StartTransfer(Slot& slot, Item& item, SteadyClock::time_point now);
  PublishOutcome FinishTransfer(Slot& slot, CURLcode result, const Item& item);
  void Feedback(const PublishOutcome& outcome);
  void FailRemaining(std::vector<Item>& items, const std::string& why);
  PublishOutcome NotAttempted() const;
  void ReleaseProbe(Item& item);

  TencentImOptions options_;
  ParsedEndpoint endpoint_;
  std::unordered_set<std::string> skip_;
  std::function<int64_t()> unix_seconds_;  // the UserSig's clock
  UserSigCache sig_cache_;                 // guarded by mu_ once calls run
  std::function<SteadyClock::time_point()> monotonic_;  // the breaker's time
  ImBreaker breaker_;
  std::shared_ptr<SharedRateBudget> budget_;  // null when requests_per_second is 0
  std::timed_mutex mu_;
  // Declared before the pool: handles are cleaned up first, then the list they point to and the
  // multi handle (whose connection cache they used).
  CurlSlistPtr headers_;
  CurlMultiPtr multi_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::mt19937 url_random_;
};

Result<void> TencentImPublisher::EnsureSlots(size_t count) {
  while (slots_.size() < count) {
    auto slot = std::make_unique<Slot>();
    slot->easy.reset(curl_easy_init());
    if (!slot->easy) {
      return Fail(ErrorCode::kInternal, "curl_easy_init: out of memory");
    }
    CURL* h = slot->easy.get();
    auto set = FirstError({
        SetOption(h, CURLOPT_NOSIGNAL, 1L, "CURLOPT_NOSIGNAL"),
        SetOption(h, CURLOPT_PROTOCOLS_STR, "http,https", "CURLOPT_PROTOCOLS_STR"),
        SetOption(h, CURLOPT_POST, 1L, "CURLOPT_POST"),
        SetOption(h, CURLOPT_HTTPHEADER, headers_.get(), "CURLOPT_HTTPHEADER"),
        SetOption(h, CURLOPT_WRITEFUNCTION, &CollectBody, "CURLOPT_WRITEFUNCTION"),
        SetOption(h, CURLOPT_WRITEDATA, static_cast<void*>(slot.get()), "CURLOPT_WRITEDATA"),
        SetOption(h, CURLOPT_PRIVATE, static_cast<void*>(slot.get()), "CURLOPT_PRIVATE"),
        SetOption(h, CURLOPT_ERRORBUFFER, slot->errbuf.data(), "CURLOPT_ERRORBUFFER"),
        SetOption(h, CURLOPT_SSL_VERIFYPEER, 1L, "CURLOPT_SSL_VERIFYPEER"),
        SetOption(h, CURLOPT_SSL_VERIFYHOST, 2L, "CURLOPT_SSL_VERIFYHOST"),
        SetOption(h, CURLOPT_TCP_KEEPALIVE, 1L, "CURLOPT_TCP_KEEPALIVE"),
        SetOption(h, CURLOPT_FOLLOWLOCATION, 0L, "CURLOPT_FOLLOWLOCATION"),
        // Without it, removing a transfer whose threaded DNS lookup still runs blocks until
        // getaddrinfo returns, whatever the timeouts say (TENCENT_IM.md §9.11). 7.87.0+.
        SetOption(h, CURLOPT_QUICK_EXIT, 1L, "CURLOPT_QUICK_EXIT"),
    });
    if (!set) {
      return set;
    }
    if (!options_.ca_file.empty()) {
      if (auto r = SetOption(h, CURLOPT_CAINFO, options_.ca_file.c_str(), "CURLOPT_CAINFO"); !r) {
        return r;
      }
    }
    slots_.push_back(std::move(slot));
  }
  return {};
}

Result<void> TencentImPublisher::StartTransfer(Slot& slot, Item& item,
                                               SteadyClock::time_point now) {
  auto sig = sig_cache_.Get();
  if (!sig) {
    return Fail(sig.error());
  }
  std::uniform_int_distribution<uint32_t> any_uint32;
  std::string url = BuildSendGroupMsgUrl(endpoint_.base, options_.sdk_app_id,
                                         options_.admin_identifier, *sig, any_uint32(url_random_));
  auto remaining = std::chrono::duration_cast<milliseconds>(item.deadline - now);
  slot.response.clear();
  slot.too_large = false;
  slot.errbuf[0] = '\0';
  CURL* h = slot.easy.get();
  // libcurl copies the URL string; the body is only pointed at and lives in `item` until the
  // transfer is removed from the multi handle.
  auto set = FirstError({
      SetOption(h, CURLOPT_URL, url.c_str(), "CURLOPT_URL"),
      SetOption(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(item.body.size()),
                "CURLOPT_POSTFIELDSIZE_LARGE"),
      SetOption(h, CURLOPT_POSTFIELDS, item.body.data(), "CURLOPT_POSTFIELDS"),
      SetOption(h, CURLOPT_TIMEOUT_MS, ClampMs(remaining), "CURLOPT_TIMEOUT_MS"),
      SetOption(h, CURLOPT_CONNECTTIMEOUT_MS, ClampMs(std::min(remaining, kMaxConnectTimeout)),
                "CURLOPT_CONNECTTIMEOUT_MS"),
  });
  if (!set) {
    return set;
  }
  if (CURLMcode mc = curl_multi_add_handle(multi_.get(), h); mc != CURLM_OK) {
    return Fail(FromCurlMultiCode(mc, "curl_multi_add_handle"));
  }
  slot.busy = true;
  return {};
}

PublishOutcome TencentImPublisher::FinishTransfer(Slot& slot, CURLcode result, const Item& item) {
  CURL* h = slot.easy.get();
  long http_status = 0;
  long request_size = 0;
  // A failed getinfo leaves the zero defaults: "no answer" and "nothing sent", which only make
  // the classification more conservative about duplicates.
  (void)curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &http_status);
  (void)curl_easy_getinfo(h, CURLINFO_REQUEST_SIZE, &request_size);
  bool sent = request_size > 0;

  if (result == CURLE_OK) {
    return ClassifyImResponse(static_cast<int>(http_status), slot.response);
  }
  PublishOutcome out;
  out.http_status = static_cast<int>(http_status);
  if (slot.too_large) {
    out.status = PublishStatus::kUnknown;
    out.error = "IM response larger than " + std::to_string(kMaxResponseBytes) + " bytes";
    return out;
  }
  if (result == CURLE_OPERATION_TIMEDOUT) {
    auto budget = std::chrono::duration_cast<milliseconds>(item.deadline - item.start);
    out.status = sent ? PublishStatus::kUnknown : PublishStatus::kRetryable;
    out.error = "timeout after " + std::to_string(budget.count()) + "ms" +
                (sent ? "" : " before the request was sent");
    return out;
  }
  Error error = FromCurlCode(result, "curl_easy_perform(" + endpoint_.target + ")",
                             RedactCurlDetail(slot.errbuf.data()));
  if (sent && DroppedAfterSend(result)) {
    out.status = PublishStatus::kUnknown;  // IM may have acted on it before the line dropped
  } else if (IsRetryable(error)) {
    out.status = PublishStatus::kRetryable;
  } else {
    out.status = PublishStatus::kPermanent;
  }
  out.error = std::move(error.message);
  return out;
}

void TencentImPublisher::Feedback(const PublishOutcome& outcome) {
  if (!budget_ || outcome.http_status == 0) {
    return;  // only IM's own answers say anything about our rate
  }
  // Only the app's own rate limits slow the process; a group over its cap (room scope) says
  // nothing about the rate of the other rooms.
  if (outcome.scope == FailureScope::kGlobalRate) {
    budget_->OnRateLimited();
  } else {
    budget_->OnCleanAnswer();
  }
}

PublishOutcome TencentImPublisher::NotAttempted() const {
  PublishOutcome out;
  out.status = PublishStatus::kNotAttempted;
  out.scope = FailureScope::kApp;
  out.error = "not attempted: IM circuit breaker open";
  return out;
}

std::vector<PublishOutcome> TencentImPublisher::PublishMany(std::span<const PublishMessage> messages,
                                                            milliseconds timeout,
                                                            size_t max_in_flight) {
  const SteadyClock::time_point call_start = SteadyClock::now();
  if (timeout <= milliseconds::zero()) {
    timeout = kDefaultTimeout;
  }
  // While the breaker is open nothing is sent: answer at once, without the lock or a body.
  const bool breaker_rejects = breaker_.RejectsAt(monotonic_());
  std::vector<Item> items(messages.size());
  std::deque<size_t> queue;
  for (size_t i = 0; i < messages.size(); ++i) {
    Item& item = items[i];
    const PublishMessage& message = messages[i];
    if (skip_.count(message.envelope.event_type) != 0) {
      item.outcome.status = PublishStatus::kSkipped;
      item.outcome.scope = FailureScope::kNone;
      item.done = true;
      continue;
    }
    if (breaker_rejects) {
      item.outcome = NotAttempted();
      item.done = true;
      continue;
    }
    const MsgPriority priority =
        message.priority.value_or(PriorityForType(options_, message.envelope.event_type));
    auto body = BuildSendGroupMsgBody(message.envelope, options_.group_id_prefix,
                                      RandomForRow(message.row_id, message.drop_generation),
                                      priority);
    if (!body) {
      item.outcome.status = PublishStatus::kPermanent;
      item.outcome.scope = FailureScope::kPermanentRow;
      item.outcome.error = "cannot build IM request: " + body.error().message;
      item.done = true;
      continue;
    }
    item.body = std::move(*body);
    queue.push_back(i);
  }

  std::unique_lock<std::timed_mutex> lock(mu_, std::defer_lock);
  if (!queue.empty() && !lock.try_lock_for(timeout)) {
    FailRemaining(items, "publisher busy: another call held it for " +
                             std::to_string(timeout.count()) + "ms");
    queue.clear();
  }
  size_t parallel = std::clamp<size_t>(max_in_flight, 1, kImPublisherPoolSize);
  if (!queue.empty()) {
    if (auto r = EnsureSlots(parallel); !r) {
      if (slots_.empty()) {
        FailRemaining(items, r.error().message);
        queue.clear();
      }
      parallel = std::min(parallel, slots_.size());
    }
  }

  size_t active = 0;
  size_t started_count = 0;
  bool probe_in_flight = false;  // one of this call's transfers is the breaker's probe
  while (!queue.empty() || active > 0) {
    SteadyClock::time_point now = SteadyClock::now();
    milliseconds poll_wait = kMaxPollWait;
    bool budget_blocked = false;
    bool waiting_for_probe = false;
    while (!queue.empty() && active < parallel) {
      size_t index = queue.front();
      Item& item = items[index];
      // Asked again each time the message reaches the front (a budget wait, a 70001 resend), so
      // a breaker opened meanwhile by another message of the call holds it back too. The probe
      // keeps its admission.
      if (!item.probe) {
        ImBreaker::Admission admission = breaker_.Admit(monotonic_());
        if (admission == ImBreaker::Admission::kReject) {
          if (probe_in_flight) {
            // Our own probe decides for the rest of the call: wait for it.
            waiting_for_probe = true;
            break;
          }
          item.outcome = NotAttempted();
          item.done = true;
          queue.pop_front();
          continue;
        }
        item.probe = admission == ImBreaker::Admission::kProbe;
      }
      if (!item.started) {
        // The first wave's clock started with the call (Publish must return within
        // `timeout`); later envelopes get their own `timeout` from when a slot frees up.
        item.started = true;
        item.start = started_count < parallel ? call_start : now;
        item.deadline = item.start + timeout;
        ++started_count;
      }
      if (budget_) {
        auto wait = budget_->TryAcquire();
        if (wait > std::chrono::microseconds::zero()) {
          if (now + wait >= item.deadline) {
            item.outcome.status = PublishStatus::kRateLimited;
            item.outcome.scope = FailureScope::kGlobalRate;
            item.outcome.error = "request budget: no slot within " +
                                 std::to_string(timeout.count()) + "ms";
            item.done = true;
            ReleaseProbe(item);
            queue.pop_front();
            continue;
          }
          poll_wait = std::min(poll_wait, std::chrono::ceil<milliseconds>(wait));
          budget_blocked = true;
          break;
        }
      }
      auto free_slot = std::find_if(slots_.begin(), slots_.end(),
                                    [](const std::unique_ptr<Slot>& s) { return !s->busy; });
      Slot& slot = **free_slot;  // exists: active < parallel <= slots_.size()
      queue.pop_front();
      if (auto r = StartTransfer(slot, item, now); !r) {
        item.outcome.status = r.error().code == ErrorCode::kInvalidArgument
                                  ? PublishStatus::kPermanent
                                  : PublishStatus::kRetryable;
        item.outcome.error = r.error().message;
        item.done = true;
        ReleaseProbe(item);
        continue;
      }
      slot.item = index;
      probe_in_flight = probe_in_flight || item.probe;
      ++active;
    }
    if (active == 0) {
      if (queue.empty()) {
        break;
      }
      // Waiting for the budget only: with no transfers, curl_multi_poll just sleeps.
      if (CURLMcode mc = curl_multi_poll(multi_.get(), nullptr, 0,
                                         static_cast<int>(poll_wait.count()), nullptr);
          mc != CURLM_OK) {
        FailRemaining(items, FromCurlMultiCode(mc, "curl_multi_poll").message);
        break;
      }
      continue;
    }

    int running = 0;
    CURLMcode mc = curl_multi_perform(multi_.get(), &running);
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi_.get(), &left)) {
      if (msg->msg != CURLMSG_DONE) {
        continue;
      }
      CURL* easy = msg->easy_handle;
      CURLcode result = msg->data.result;  // read before remove_handle frees msg
      auto it = std::find_if(slots_.begin(), slots_.end(),
                             [easy](const std::unique_ptr<Slot>& s) { return s->easy.get() == easy; });
      if (it == slots_.end()) {
        continue;  // not ours; cannot happen with a private multi handle
      }
      Slot& slot = **it;
      Item& item = items[slot.item];
      PublishOutcome outcome = FinishTransfer(slot, result, item);
      // Removing a finished transfer only fails for handles that are not in this multi.
      (void)curl_multi_remove_handle(multi_.get(), easy);
      slot.busy = false;
      --active;
      Feedback(outcome);
      outcome.breaker = breaker_.Record(BreakerVerdict(outcome), item.probe,
                                        outcome.min_cooldown, monotonic_());
      if (item.probe) {
        item.probe = false;  // recorded; a 70001 resend below is not a second probe
        probe_in_flight = false;
      }
      SteadyClock::time_point done_at = SteadyClock::now();
      if (outcome.im_error_code == kImErrorUserSigExpired && !item.sig_renewed &&
          done_at < item.deadline) {
        // The sig ran out (clock skew, or IM's view of it): renew and resend the same body.
        sig_cache_.Invalidate();
        item.sig_renewed = true;
        queue.push_front(slot.item);
        continue;
      }
      item.outcome = std::move(outcome);
      item.done = true;
    }
    if (mc != CURLM_OK) {
      std::string why = FromCurlMultiCode(mc, "curl_multi_perform").message;
      for (auto& slot : slots_) {
        if (slot->busy) {
          (void)curl_multi_remove_handle(multi_.get(), slot->easy.get());
          slot->busy = false;
        }
      }
      FailRemaining(items, why);
      break;
    }
    // Loop straight back when finished transfers freed slots for queued work (e.g. a 70001
    // resend); otherwise wait for socket activity, a curl timer or the next budget token.
    bool can_start_now =
        !queue.empty() && active < parallel && !budget_blocked && !waiting_for_probe;
    if (active > 0 && !can_start_now) {
      if (CURLMcode pc = curl_multi_poll(multi_.get(), nullptr, 0,
                                         static_cast<int>(poll_wait.count()), nullptr);
          pc != CURLM_OK) {
        for (auto& slot : slots_) {
          if (slot->busy) {
            (void)curl_multi_remove_handle(multi_.get(), slot->easy.get());
            slot->busy = false;
          }
        }
        FailRemaining(items, FromCurlMultiCode(pc, "curl_multi_poll").message);
        break;
      }
    }
  }

  const SteadyClock::time_point end = SteadyClock::now();
  std::vector<PublishOutcome> out;
  out.reserve(items.size());
  for (Item& item : items) {
    if (item.outcome.attempted()) {
      item.outcome.latency = std::chrono::duration_cast<milliseconds>(
          end - (item.started ? item.start : call_start));
    }
    out.push_back(std::move(item.outcome));
  }
  return out;
}

void TencentImPublisher::FailRemaining(std::vector<Item>& items, const std::string& why) {
  for (Item& item : items) {
    if (!item.done) {
      item.outcome = PublishOutcome{};
      item.outcome.status = PublishStatus::kRetryable;
      item.outcome.error = why;
      item.done = true;
      ReleaseProbe(item);
    }
  }
}

void TencentImPublisher::ReleaseProbe(Item& item) {
  if (item.probe) {
    // The probe never reached IM: it proved nothing, the next request probes instead.
    (void)breaker_.Record(ImBreaker::Verdict::kInconclusive, true, milliseconds::zero(),
                          monotonic_());
    item.probe = false;
  }
}

}  // namespace

Result<std::string> NormalizeImEndpoint(const std::string& endpoint) {
  auto parsed = ParseEndpoint(endpoint);
  if (!parsed) {
    return Fail(parsed.error());
  }
  return parsed->base;
}

Result<std::unique_ptr<Publisher>> MakeTencentImPublisher(const TencentImOptions& options,
                                                          TencentImClocks clocks) {
  auto endpoint = ParseEndpoint(options.endpoint);
  if (!endpoint) {
    return Fail(ErrorCode::kInvalidArgument,
                std::string(kEndpointKey) + ": " + endpoint.error().message);
  }
  if (options.sdk_app_id == 0) {
    return Fail(ErrorCode::kInvalidArgument, "tencent_im.sdk_app_id must be set (non-zero)");
  }
  if (options.admin_identifier.empty()) {
    return Fail(ErrorCode::kInvalidArgument, "tencent_im.admin_identifier must not be empty");
  }
  if (options.secret_key.empty()) {
    return Fail(ErrorCode::kInvalidArgument, "tencent_im.secret_key must not be empty");
  }
  if (!(options.requests_per_second >= 0)) {  // also rejects NaN
    return Fail(ErrorCode::kInvalidArgument, "tencent_im.requests_per_second must be >= 0");
  }
  if (!clocks.unix_seconds || !clocks.monotonic) {
    return Fail(ErrorCode::kInvalidArgument, "MakeTencentImPublisher: no clock");
  }
  if (options.priority_by_type.count("") != 0) {
    return Fail(ErrorCode::kInvalidArgument,
                "tencent_im.priority_by_type: an event type must not be empty");
  }
  CurlSlistPtr headers{curl_slist_append(nullptr, "Content-Type: application/json")};
  // An empty "Expect:" stops libcurl from waiting for "100 Continue" on larger bodies.
  if (!headers || curl_slist_append(headers.get(), "Expect:") == nullptr) {
    return Fail(ErrorCode::kInternal, "curl_slist_append: out of memory");
  }
  CurlMultiPtr multi{curl_multi_init()};
  if (!multi) {
    return Fail(ErrorCode::kInternal, "curl_multi_init: out of memory");
  }
  // Keep every pooled connection open between calls (libcurl's default cache is smaller).
  if (CURLMcode mc = curl_multi_setopt(multi.get(), CURLMOPT_MAXCONNECTS,
                                       static_cast<long>(kImPublisherPoolSize));
      mc != CURLM_OK) {
    return Fail(FromCurlMultiCode(mc, "curl_multi_setopt(CURLMOPT_MAXCONNECTS)"));
  }
  return std::unique_ptr<Publisher>(std::make_unique<TencentImPublisher>(
      options, std::move(*endpoint), std::move(clocks), std::move(headers), std::move(multi)));
}

Result<std::unique_ptr<Publisher>> MakeTencentImPublisher(const TencentImOptions& options,
                                                          std::function<int64_t()> now_seconds) {
  TencentImClocks clocks;
  clocks.unix_seconds = std::move(now_seconds);
  return MakeTencentImPublisher(options, std::move(clocks));
}

Result<std::unique_ptr<Publisher>> MakeTencentImPublisher(const TencentImOptions& options) {
  return MakeTencentImPublisher(options, TencentImClocks{});
}

}  // namespace room_outbox
