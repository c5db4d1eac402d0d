// TransferPool: the HTTP side of a Tencent IM publisher, over one libcurl multi handle and a pool
// of easy handles that keep their connections open across calls.
//
// Every transfer goes to one URL, set on each easy handle once: libcurl parses it once per
// transfer, and formats it without the query. What changes per request (the query: usersig,
// random) travels as the request target (CURLOPT_REQUEST_TARGET), which libcurl writes into the
// request line as given. The request line is then "POST <path>?<query> HTTP/1.1", as with the
// whole URL; only a plain-http forward proxy (which wants the absolute URL) would not do, and the
// endpoint is https (a proxy tunnels it) except on loopback.
//
// Start() puts a POST on a free slot; Perform() drives the transfers and hands back the ones that
// finished; Wait() blocks until socket activity, a libcurl timer or the given time (it just
// sleeps when nothing is in flight); AbortAll() drops every transfer in flight. A slot goes back
// to the pool through one path (Retire), whether its transfer finished or was aborted.
//
// Owns its handles (RAII); the header list and the multi handle outlive the easy handles.
// Not thread-safe: the owning publisher serialises calls. Process setup: the host called
// curl_global_init().
#pragma once

#include <curl/curl.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/tencent/curl_handles.h"

namespace room_outbox::core {

class TransferPool {
 public:
  // What a finished transfer left behind.
  struct Finished {
    size_t tag = 0;              // as given to Start
    CURLcode result = CURLE_OK;  // libcurl's verdict on the transfer
    int http_status = 0;         // 0 when no HTTP answer arrived
    bool sent = false;           // request bytes went out
    bool too_large = false;      // the answer passed kMaxResponseBytes and was cut off
    std::string response;        // the answer's body
    std::string curl_detail;     // CURLOPT_ERRORBUFFER's text (may hold the URL: redact it)
  };

  // IM answers are a few hundred bytes; a huge body means something else is answering.
  static constexpr size_t kMaxResponseBytes = 64 * 1024;

  // The multi handle (keeping up to `max_connections` connections open between calls) and the
  // request headers. `url` (scheme, host, port and path) is where every request goes; `ca_file`
  // (empty: the system's) verifies the server. Every request goes through `proxy` (libcurl's
  // CURLOPT_PROXY syntax), or straight to the server when it is empty: the environment's
  // http_proxy, https_proxy, ALL_PROXY and NO_PROXY are never used. kInternal when libcurl cannot
  // allocate.
  [[nodiscard]] static Result<std::unique_ptr<TransferPool>> Make(size_t max_connections,
                                                                  std::string url,
                                                                  std::string ca_file,
                                                                  std::string proxy);

  // Grows the pool to `count` slots. On failure the slots made so far stay usable.
  [[nodiscard]] Result<void> Reserve(size_t count);
  size_t size() const { return slots_.size(); }
  size_t active() const { return active_; }

  // Starts a POST of `body` (not copied: it must stay put until the transfer is Finished or
  // aborted) with `target` (path and query; libcurl copies it) on a free slot
  // (active() < size()), bounded by `time_left`.
  [[nodiscard]] Result<void> Start(size_t tag, const std::string& target, const std::string& body,
                                   std::chrono::milliseconds time_left);
  // Drives the transfers and appends the finished ones to `finished`. A failure of the multi
  // handle is returned after the finished transfers were handed over.
  [[nodiscard]] Result<void> Perform(std::vector<Finished>& finished);
  // Waits up to `wait` for socket activity or a libcurl timer; with nothing in flight it sleeps.
  [[nodiscard]] Result<void> Wait(std::chrono::milliseconds wait);
  // Drops every transfer in flight; their slots are free again.
  void AbortAll();

 private:
  struct Slot {
    CurlPtr easy;
    std::string response;
    bool too_large = false;
    bool busy = false;
    size_t tag = 0;
    std::array<char, CURL_ERROR_SIZE> errbuf{};
  };

  TransferPool(CurlSlistPtr headers, CurlMultiPtr multi, std::string url, std::string ca_file,
               std::string proxy);
  [[nodiscard]] Result<std::unique_ptr<Slot>> NewSlot() const;
  Finished Collect(Slot& slot, CURLcode result);
  // The one way a slot is freed: its transfer leaves the multi handle.
  void Retire(Slot& slot);
  static size_t CollectBody(char* data, size_t size, size_t count, void* user) noexcept;

  std::string url_;
  std::string ca_file_;
  std::string proxy_;  // "" : no proxy, whatever the environment says
  // Declared before the slots: the easy handles are cleaned up first, then the list they point
  // to and the multi handle whose connection cache they used.
  CurlSlistPtr headers_;
  CurlMultiPtr multi_;
  std::vector<std::unique_ptr<Slot>> slots_;
  size_t active_ = 0;
};

}  // namespace room_outbox::core
