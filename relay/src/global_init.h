// Process-wide library setup, held by RAII guards that main() creates once before any thread:
// the MariaDB client library and libcurl both require one global init before use and one
// cleanup at exit, and neither is thread-safe to initialise lazily.
#pragma once

#include "result.h"

namespace room_outbox::relay {

class MysqlLibraryGuard {
 public:
  MysqlLibraryGuard();   // mysql_library_init
  ~MysqlLibraryGuard();  // mysql_library_end
  MysqlLibraryGuard(const MysqlLibraryGuard&) = delete;
  MysqlLibraryGuard& operator=(const MysqlLibraryGuard&) = delete;
  // Ok, or why the init failed (the process should exit 1).
  const Status& status() const { return status_; }

 private:
  Status status_;
};

class CurlGlobalGuard {
 public:
  CurlGlobalGuard();   // curl_global_init(CURL_GLOBAL_DEFAULT)
  ~CurlGlobalGuard();  // curl_global_cleanup
  CurlGlobalGuard(const CurlGlobalGuard&) = delete;
  CurlGlobalGuard& operator=(const CurlGlobalGuard&) = delete;
  const Status& status() const { return status_; }

 private:
  Status status_;
  bool initialized_ = false;
};

}  // namespace room_outbox::relay
