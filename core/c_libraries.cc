#include "core/c_libraries.h"

#include <curl/curl.h>
#include <mysql.h>

#include <string>

namespace room_outbox::core {

Status InitCLibraries(bool& curl_ready) {
  curl_ready = false;
  if (mysql_library_init(0, nullptr, nullptr) != 0) {
    return Error{ErrorCode::kInternal, "mysql_library_init failed"};
  }
  const CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (rc != CURLE_OK) {
    return Error{ErrorCode::kInternal, std::string("curl_global_init: ") + curl_easy_strerror(rc)};
  }
  curl_ready = true;
  return Status();
}

void CleanupCLibraries(bool curl_ready) {
  if (curl_ready) {
    curl_global_cleanup();
  }
  mysql_library_end();
}

}  // namespace room_outbox::core
