// Benchmark 5: what an idle outbox-relay costs the machine.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "bench/bench_database.h"
#include "bench/benchmarks.h"
#include "bench/child_process.h"

namespace room_outbox::bench {
namespace {

using std::chrono::milliseconds;

void WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  if (!out) {
    throw BenchFailure("cannot write " + path.string());
  }
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A relay config with every [outbox_worker] key at its default, aimed at `db` and `stub`.
std::string RelayConfig(const BenchDatabase& db, const testing::FakeImServer& stub,
                        const std::filesystem::path& secret_file) {
  const MysqlOptions mysql = db.Options();
  return "node_id = \"bench-idle\"\n\n"
         "[mysql]\nsocket = \"" + mysql.socket + "\"\nuser = \"root\"\ndatabase = \"" +
         mysql.database + "\"\n\n"
         "[outbox_worker]\n\n"
         "[tencent_im]\nendpoint = \"" + stub.endpoint() + "\"\nsdk_app_id = " +
         std::to_string(stub.options().sdk_app_id) + "\nadmin_identifier = \"" +
         stub.options().identifier + "\"\nsecret_key_file = \"" + secret_file.string() +
         "\"\n\n[log]\nlevel = \"info\"\n";
}

// Waits for the worker's first log line; false when the process exits or `limit` passes.
bool WaitForWorker(ChildProcess& relay, const std::filesystem::path& log, milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!relay.Running()) {
      return false;
    }
    if (ReadFile(log).find("outbox worker started") != std::string::npos) {
      return true;
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
  return false;
}

int64_t ServerQuestions(BenchDatabase& db) {
  return std::stoll(db.Query("SHOW GLOBAL STATUS LIKE 'Questions'").at(0).at(1));
}

}  // namespace

void RunIdleRelay(const BenchContext& ctx, Report& report) {
  const std::filesystem::path dir = std::filesystem::path(ctx.work_dir) / "idle-relay";
  std::filesystem::create_directories(dir);
  auto stub = StartStub(milliseconds(0));
  BenchDatabase db(ctx.socket, "bench_idle");
  const std::filesystem::path secret = dir / "tim-secret-key";
  WriteFile(secret, stub->options().secret_key + "\n");
  std::filesystem::permissions(secret, std::filesystem::perms::owner_read |
                                           std::filesystem::perms::owner_write);
  const std::filesystem::path config = dir / "relay.toml";
  WriteFile(config, RelayConfig(db, *stub, secret));
  const std::filesystem::path log = dir / "relay.log";

  ChildProcess relay({ctx.relay_binary, "--config", config.string()}, log.string());
  if (!WaitForWorker(relay, log, milliseconds(10000))) {
    throw BenchFailure("outbox-relay did not start; its log (" + log.string() + "):\n" +
                       ReadFile(log));
  }
  const double cpu_start = relay.CpuSeconds();
  const int64_t questions_start = ServerQuestions(db);
  Stopwatch watch;
  std::this_thread::sleep_for(ctx.idle_window);
  const double cpu = relay.CpuSeconds() - cpu_start;
  const double seconds = watch.Seconds();
  // Two statements of our own (the SHOW itself) are in the difference; they are left in.
  const int64_t questions = ServerQuestions(db) - questions_start;
  const long hwm_kib = relay.StatusKib("VmHWM");
  const long rss_kib = relay.StatusKib("VmRSS");
  const bool alive = relay.Running();
  const std::optional<int> exit_status = relay.Stop(milliseconds(5000));

  report.Add({"5",
              "Idle outbox-relay process (" + ctx.relay_binary + "), empty outbox, " +
                  FormatFixed(seconds, 0) + " s after the worker started",
              "shipped defaults: poll_interval=1s, batch_size=100, max_in_flight=16; im-stub "
              "in the bench process; log level info",
              "CPU " + FormatFixed(cpu, 3) + " s (utime+stime; " +
                  FormatFixed(100.0 * cpu / seconds, 2) + "% of one core), peak RSS (VmHWM) " +
                  FormatFixed(static_cast<double>(hwm_kib) / 1024.0, 1) + " MiB, RSS " +
                  FormatFixed(static_cast<double>(rss_kib) / 1024.0, 1) + " MiB; " +
                  FormatCount(static_cast<double>(questions)) +
                  " statements at the server; IM requests " +
                  FormatCount(static_cast<double>(stub->Stats().requests)) +
                  (alive ? "" : "; RELAY EXITED EARLY") +
                  (exit_status ? "" : "; did not stop on SIGTERM within 5 s"),
              FormatFixed(cpu / seconds * 1000.0, 2) + " ms CPU per s"});
}

}  // namespace room_outbox::bench
