// The fixture of the wake socket's tests: a private temporary directory holding the socket's
// path (removed with everything in it afterwards), and MustBind, which binds a WakeSocket there
// with the default mode and records a failure when it cannot.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include "config/config.h"
#include "daemon/wake_socket.h"

namespace room_outbox::testing {

class WakeSocketFixture : public ::testing::Test {
 protected:
  WakeSocketFixture() {
    char tmpl[] = "/tmp/wake-socket-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    path_ = (dir_ / "wake.sock").string();
  }
  ~WakeSocketFixture() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  std::unique_ptr<relay::WakeSocket> MustBind(const std::string& path) {
    auto bound = relay::WakeSocket::Bind(path, relay::kDefaultWakeSocketMode);
    EXPECT_TRUE(bound) << bound.error().message;
    return bound ? std::move(*bound) : nullptr;
  }

  std::filesystem::path dir_;
  std::string path_;
};

}  // namespace room_outbox::testing
