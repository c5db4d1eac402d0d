// The fixture of the relay config's unit tests: relay.toml files written into a private
// temporary directory (removed afterwards) and loaded with LoadConfig, with no secret of the
// machine running the tests in the environment (ROOM_OUTBOX_MYSQL_PASSWORD,
// ROOM_OUTBOX_TIM_SECRET_KEY, CREDENTIALS_DIRECTORY and ROOM_OUTBOX_NODE_ID are unset for each
// test).
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <system_error>

#include "config/config.h"

namespace room_outbox::testing {

// Sets (or, with nullptr, unsets) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

class ConfigFixture : public ::testing::Test {
 protected:
  ConfigFixture() {
    char tmpl[] = "/tmp/relay-config-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  ~ConfigFixture() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  // Writes `content` to `name` (a path below the directory) and returns its path.
  std::string Write(const std::string& name, const std::string& content) {
    const std::filesystem::path p = dir_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << content;
    return p.string();
  }
  core::Result<relay::Config> Load(const std::string& content,
                                   const std::string& name = "relay.toml") {
    return relay::LoadConfig(Write(name, content));
  }
  // The error of a config that must be refused; records a failure when it is accepted.
  std::string ErrorOf(const std::string& content) {
    auto c = Load(content);
    EXPECT_FALSE(c) << "accepted:\n" << content;
    return c ? std::string() : c.error().message;
  }

  std::filesystem::path dir_;
  ScopedEnv no_password_{"ROOM_OUTBOX_MYSQL_PASSWORD", nullptr};
  ScopedEnv no_key_{"ROOM_OUTBOX_TIM_SECRET_KEY", nullptr};
  ScopedEnv no_creds_{"CREDENTIALS_DIRECTORY", nullptr};
  ScopedEnv no_node_id_{"ROOM_OUTBOX_NODE_ID", nullptr};
};

}  // namespace room_outbox::testing
