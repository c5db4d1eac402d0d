// Process-wide library setup for the integration test binary. Like a host service, the binary
// initialises libcurl and the MariaDB client library once, before any test thread runs.
#include <curl/curl.h>
#include <gtest/gtest.h>
#include <mysql.h>

namespace {

class LibrariesEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    ASSERT_EQ(mysql_library_init(0, nullptr, nullptr), 0);
    ASSERT_EQ(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
  }
  void TearDown() override {
    curl_global_cleanup();
    mysql_library_end();
  }
};

[[maybe_unused]] ::testing::Environment* const kLibraries =
    ::testing::AddGlobalTestEnvironment(new LibrariesEnvironment);

}  // namespace
