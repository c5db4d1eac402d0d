#include "core/tencent/transfer_pool.h"

#include <algorithm>
#include <initializer_list>
#include <utility>

#include "core/tencent/curl_error.h"

namespace room_outbox::core {
namespace {

// A TLS handshake to IM takes well under this; beyond it the host is unreachable.
constexpr std::chrono::milliseconds kMaxConnectTimeout{3000};

Result<void> FirstError(std::initializer_list<Result<void>> results) {
  for (const Result<void>& r : results) {
    if (!r) {
      return r;
    }
  }
  return {};
}

long ClampMs(std::chrono::milliseconds ms) {
  return static_cast<long>(std::max<int64_t>(1, ms.count()));
}

}  // namespace

Result<std::unique_ptr<TransferPool>> TransferPool::Make(size_t max_connections, std::string url,
                                                         std::string ca_file, std::string proxy) {
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
  if (CURLMcode mc =
          curl_multi_setopt(multi.get(), CURLMOPT_MAXCONNECTS, static_cast<long>(max_connections));
      mc != CURLM_OK) {
    return Fail(FromCurlMultiCode(mc, "curl_multi_setopt(CURLMOPT_MAXCONNECTS)"));
  }
  return std::unique_ptr<TransferPool>(new TransferPool(
      std::move(headers), std::move(multi), std::move(url), std::move(ca_file), std::move(proxy)));
}

TransferPool::TransferPool(CurlSlistPtr headers, CurlMultiPtr multi, std::string url,
                           std::string ca_file, std::string proxy)
    : url_(std::move(url)),
      ca_file_(std::move(ca_file)),
      proxy_(std::move(proxy)),
      headers_(std::move(headers)),
      multi_(std::move(multi)) {}

Result<void> TransferPool::Reserve(size_t count) {
  while (slots_.size() < count) {
    auto slot = NewSlot();
    if (!slot) {
      return Fail(slot.error());
    }
    slots_.push_back(std::move(*slot));
  }
  return {};
}

Result<std::unique_ptr<TransferPool::Slot>> TransferPool::NewSlot() const {
  auto slot = std::make_unique<Slot>();
  slot->easy.reset(curl_easy_init());
  if (!slot->easy) {
    return Fail(ErrorCode::kInternal, "curl_easy_init: out of memory");
  }
  CURL* h = slot->easy.get();
  auto set = FirstError({
      SetOption(h, CURLOPT_NOSIGNAL, 1L, "CURLOPT_NOSIGNAL"),
      SetOption(h, CURLOPT_PROTOCOLS_STR, "http,https", "CURLOPT_PROTOCOLS_STR"),
      SetOption(h, CURLOPT_URL, url_.c_str(), "CURLOPT_URL"),
      SetOption(h, CURLOPT_POST, 1L, "CURLOPT_POST"),
      SetOption(h, CURLOPT_HTTPHEADER, headers_.get(), "CURLOPT_HTTPHEADER"),
      SetOption(h, CURLOPT_WRITEFUNCTION, &TransferPool::CollectBody, "CURLOPT_WRITEFUNCTION"),
      SetOption(h, CURLOPT_WRITEDATA, static_cast<void*>(slot.get()), "CURLOPT_WRITEDATA"),
      SetOption(h, CURLOPT_PRIVATE, static_cast<void*>(slot.get()), "CURLOPT_PRIVATE"),
      SetOption(h, CURLOPT_ERRORBUFFER, slot->errbuf.data(), "CURLOPT_ERRORBUFFER"),
      SetOption(h, CURLOPT_SSL_VERIFYPEER, 1L, "CURLOPT_SSL_VERIFYPEER"),
      SetOption(h, CURLOPT_SSL_VERIFYHOST, 2L, "CURLOPT_SSL_VERIFYHOST"),
      SetOption(h, CURLOPT_TCP_KEEPALIVE, 1L, "CURLOPT_TCP_KEEPALIVE"),
      SetOption(h, CURLOPT_FOLLOWLOCATION, 0L, "CURLOPT_FOLLOWLOCATION"),
      // Without it, removing a transfer whose threaded DNS lookup still runs blocks until
      // getaddrinfo returns, whatever the timeouts say. 7.87.0+.
      SetOption(h, CURLOPT_QUICK_EXIT, 1L, "CURLOPT_QUICK_EXIT"),
      // The proxy is the configured one or none: "" makes libcurl ignore http_proxy,
      // https_proxy and ALL_PROXY, and an empty no-proxy list makes it ignore NO_PROXY.
      SetOption(h, CURLOPT_PROXY, proxy_.c_str(), "CURLOPT_PROXY"),
      SetOption(h, CURLOPT_NOPROXY, "", "CURLOPT_NOPROXY"),
  });
  if (!set) {
    return Fail(set.error());
  }
  if (!ca_file_.empty()) {
    if (auto r = SetOption(h, CURLOPT_CAINFO, ca_file_.c_str(), "CURLOPT_CAINFO"); !r) {
      return Fail(r.error());
    }
  }
  return slot;
}

// libcurl write callback: collects the answer up to kMaxResponseBytes. Never throws into C.
size_t TransferPool::CollectBody(char* data, size_t size, size_t count, void* user) noexcept {
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

Result<void> TransferPool::Start(size_t tag, const std::string& target, const std::string& body,
                                 std::chrono::milliseconds time_left) {
  auto free_slot = std::find_if(slots_.begin(), slots_.end(),
                                [](const std::unique_ptr<Slot>& s) { return !s->busy; });
  if (free_slot == slots_.end()) {
    return Fail(ErrorCode::kInternal, "TransferPool::Start: no free slot");
  }
  Slot& slot = **free_slot;
  slot.response.clear();
  slot.too_large = false;
  slot.errbuf[0] = '\0';
  CURL* h = slot.easy.get();
  // libcurl copies the target string; the body is only pointed at.
  auto set = FirstError({
      SetOption(h, CURLOPT_REQUEST_TARGET, target.c_str(), "CURLOPT_REQUEST_TARGET"),
      SetOption(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()),
                "CURLOPT_POSTFIELDSIZE_LARGE"),
      SetOption(h, CURLOPT_POSTFIELDS, body.data(), "CURLOPT_POSTFIELDS"),
      SetOption(h, CURLOPT_TIMEOUT_MS, ClampMs(time_left), "CURLOPT_TIMEOUT_MS"),
      SetOption(h, CURLOPT_CONNECTTIMEOUT_MS, ClampMs(std::min(time_left, kMaxConnectTimeout)),
                "CURLOPT_CONNECTTIMEOUT_MS"),
  });
  if (!set) {
    return set;
  }
  if (CURLMcode mc = curl_multi_add_handle(multi_.get(), h); mc != CURLM_OK) {
    return Fail(FromCurlMultiCode(mc, "curl_multi_add_handle"));
  }
  slot.busy = true;
  slot.tag = tag;
  ++active_;
  return {};
}

Result<void> TransferPool::Perform(std::vector<Finished>& finished) {
  int running = 0;
  const CURLMcode mc = curl_multi_perform(multi_.get(), &running);
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(multi_.get(), &left)) {
    if (msg->msg != CURLMSG_DONE) {
      continue;
    }
    CURL* easy = msg->easy_handle;
    const CURLcode result = msg->data.result;  // read before Retire frees msg
    auto it = std::find_if(slots_.begin(), slots_.end(), [easy](const std::unique_ptr<Slot>& s) {
      return s->busy && s->easy.get() == easy;
    });
    if (it == slots_.end()) {
      continue;  // not ours; cannot happen with a private multi handle
    }
    finished.push_back(Collect(**it, result));
    Retire(**it);
  }
  if (mc != CURLM_OK) {
    return Fail(FromCurlMultiCode(mc, "curl_multi_perform"));
  }
  return {};
}

TransferPool::Finished TransferPool::Collect(Slot& slot, CURLcode result) {
  Finished out;
  out.tag = slot.tag;
  out.result = result;
  long http_status = 0;
  long request_size = 0;
  // A failed getinfo leaves the zero defaults: "no answer" and "nothing sent", which only make
  // the classification more conservative about duplicates.
  (void)curl_easy_getinfo(slot.easy.get(), CURLINFO_RESPONSE_CODE, &http_status);
  (void)curl_easy_getinfo(slot.easy.get(), CURLINFO_REQUEST_SIZE, &request_size);
  out.http_status = static_cast<int>(http_status);
  out.sent = request_size > 0;
  out.too_large = slot.too_large;
  out.response = std::move(slot.response);
  out.curl_detail = slot.errbuf.data();
  return out;
}

Result<void> TransferPool::Wait(std::chrono::milliseconds wait) {
  if (CURLMcode mc =
          curl_multi_poll(multi_.get(), nullptr, 0, static_cast<int>(wait.count()), nullptr);
      mc != CURLM_OK) {
    return Fail(FromCurlMultiCode(mc, "curl_multi_poll"));
  }
  return {};
}

void TransferPool::AbortAll() {
  for (auto& slot : slots_) {
    if (slot->busy) {
      Retire(*slot);
    }
  }
}

void TransferPool::Retire(Slot& slot) {
  // Removing a transfer only fails for a handle that is not in this multi handle.
  (void)curl_multi_remove_handle(multi_.get(), slot.easy.get());
  slot.busy = false;
  --active_;
}

}  // namespace room_outbox::core
