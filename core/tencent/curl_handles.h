// Owning smart pointers for libcurl handles, one per handle type, with stateless functor
// deleters (zero size, correct moves, and they cope with free functions that return a code).
#pragma once

#include <curl/curl.h>

#include <memory>

namespace room_outbox::core {

struct CurlEasyCleanup {
  void operator()(CURL* handle) const noexcept { curl_easy_cleanup(handle); }
};
struct CurlMultiCleanup {
  // curl_multi_cleanup only fails for a bad handle or when called from a callback; neither can
  // happen for a handle we own, and a destructor has nowhere to report it.
  void operator()(CURLM* handle) const noexcept { (void)curl_multi_cleanup(handle); }
};
struct CurlSlistFree {
  void operator()(curl_slist* list) const noexcept { curl_slist_free_all(list); }
};
struct CurlUrlCleanup {
  void operator()(CURLU* url) const noexcept { curl_url_cleanup(url); }
};
struct CurlStringFree {
  void operator()(char* text) const noexcept { curl_free(text); }
};

using CurlPtr = std::unique_ptr<CURL, CurlEasyCleanup>;
using CurlMultiPtr = std::unique_ptr<CURLM, CurlMultiCleanup>;
using CurlSlistPtr = std::unique_ptr<curl_slist, CurlSlistFree>;
using CurlUrlPtr = std::unique_ptr<CURLU, CurlUrlCleanup>;
using CurlStringPtr = std::unique_ptr<char, CurlStringFree>;

}  // namespace room_outbox::core
