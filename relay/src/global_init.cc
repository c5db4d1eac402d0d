#include "global_init.h"

#include <curl/curl.h>
#include <mysql.h>

#include <string>

namespace room_outbox::relay {

MysqlLibraryGuard::MysqlLibraryGuard() {
  if (mysql_library_init(0, nullptr, nullptr) != 0) {
    status_ = Error{ErrorCode::kInternal, "mysql_library_init failed"};
  }
}

// Safe to call after a failed init too: it releases whatever the init allocated.
MysqlLibraryGuard::~MysqlLibraryGuard() { mysql_library_end(); }

CurlGlobalGuard::CurlGlobalGuard() {
  const CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (rc != CURLE_OK) {
    status_ = Error{ErrorCode::kInternal,
                    std::string("curl_global_init: ") + curl_easy_strerror(rc)};
    return;
  }
  initialized_ = true;
}

CurlGlobalGuard::~CurlGlobalGuard() {
  if (initialized_) {
    curl_global_cleanup();
  }
}

}  // namespace room_outbox::relay
