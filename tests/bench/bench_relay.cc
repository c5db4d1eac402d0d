#include "bench/bench_relay.h"

#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "bench/bench_support.h"

namespace room_outbox::bench {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kStartLimit{10000};

void WriteTextFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  if (!out) {
    throw BenchFailure("cannot write " + path.string());
  }
}

// Writes relay.toml and the secret key under `dir`; returns the log's path.
std::filesystem::path PrepareDir(const std::filesystem::path& dir, const BenchDatabase& db,
                                 const testing::FakeImServer& stub,
                                 const BenchRelayOptions& options) {
  std::filesystem::create_directories(dir);
  const std::filesystem::path secret = dir / "tim-secret-key";
  WriteTextFile(secret, stub.options().secret_key + "\n");
  std::filesystem::permissions(
      secret, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  WriteTextFile(dir / "relay.toml", BenchRelayConfig(db, stub, secret, options));
  const std::filesystem::path log = dir / "relay.log";
  std::filesystem::remove(log);
  return log;
}

std::vector<std::string> RelayArgv(const std::string& binary, const std::filesystem::path& dir) {
  return {binary, "--config", (dir / "relay.toml").string()};
}

}  // namespace

std::string ReadTextFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string BenchRelayConfig(const BenchDatabase& db, const testing::FakeImServer& stub,
                             const std::filesystem::path& secret_file,
                             const BenchRelayOptions& options) {
  const MysqlOptions mysql = db.Options();
  std::string text = "node_id = \"" + options.node_id + "\"\n\n[mysql]\nsocket = \"" +
                     mysql.socket + "\"\nuser = \"root\"\ndatabase = \"" + mysql.database +
                     "\"\n\n[outbox_worker]\n";
  if (options.batch_size) {
    text += "batch_size = " + std::to_string(*options.batch_size) + "\n";
  }
  if (options.max_in_flight) {
    text += "max_in_flight = " + std::to_string(*options.max_in_flight) + "\n";
  }
  if (options.room_min_interval) {
    text +=
        "room_min_interval = \"" + std::to_string(options.room_min_interval->count()) + "ms\"\n";
  }
  text += "\n[tencent_im]\nendpoint = \"" + stub.endpoint() +
          "\"\nsdk_app_id = " + std::to_string(stub.options().sdk_app_id) +
          "\nadmin_identifier = \"" + stub.options().identifier + "\"\nsecret_key_file = \"" +
          secret_file.string() + "\"\n";
  if (options.requests_per_second) {
    text += "requests_per_second = " + FormatFixed(*options.requests_per_second, 0) + "\n";
  }
  if (options.app_requests_per_second) {
    text +=
        "app_requests_per_second = " + FormatFixed(*options.app_requests_per_second, 0) + "\n";
  }
  if (options.pack_max_events) {
    text += "pack_max_events = " + std::to_string(*options.pack_max_events) + "\n";
  }
  return text + "\n[log]\nlevel = \"info\"\n";
}

BenchRelay::BenchRelay(const std::string& relay_binary, const std::filesystem::path& dir,
                       const BenchDatabase& db, const testing::FakeImServer& stub,
                       const BenchRelayOptions& options)
    : log_(PrepareDir(dir, db, stub, options)),
      process_(RelayArgv(relay_binary, dir), log_.string()) {}

void BenchRelay::WaitStarted() {
  const auto deadline = std::chrono::steady_clock::now() + kStartLimit;
  while (ReadTextFile(log_).find("outbox worker started") == std::string::npos) {
    if (!process_.Running() || std::chrono::steady_clock::now() >= deadline) {
      throw BenchFailure("outbox-relay did not start; its log (" + log_.string() + "):\n" +
                         ReadTextFile(log_));
    }
    std::this_thread::sleep_for(milliseconds(20));
  }
}

bool BenchRelay::Stop() { return process_.Stop(milliseconds(10000)).has_value(); }

}  // namespace room_outbox::bench
