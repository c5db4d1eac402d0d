// LibraryInit (room_outbox/hook.h): the one place that calls the C libraries' global init.
#include <curl/curl.h>
#include <mysql.h>

#include <string>

#include "room_outbox/hook.h"

namespace room_outbox {

LibraryInit::LibraryInit() {
  if (mysql_library_init(0, nullptr, nullptr) != 0) {
    status_ = Error{ErrorCode::kInternal, "mysql_library_init failed"};
    return;
  }
  const CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (rc != CURLE_OK) {
    status_ = Error{ErrorCode::kInternal,
                    std::string("curl_global_init: ") + curl_easy_strerror(rc)};
    return;
  }
  curl_ = true;
}

// mysql_library_end is safe after a failed init too: it releases whatever the init allocated.
LibraryInit::~LibraryInit() {
  if (curl_) {
    curl_global_cleanup();
  }
  mysql_library_end();
}

}  // namespace room_outbox
