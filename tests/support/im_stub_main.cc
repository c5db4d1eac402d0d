// im-stub: the fake Tencent IM server as a standalone process, for the demo and benchmarks.
//
//   im-stub --port 0 --port-file /tmp/im.port --sdk-app-id 1400012345
//           --identifier administrator --secret-key-file key.txt --latency-ms 5 --mode up
//
// Prints "listening on http://127.0.0.1:PORT", then serves until SIGTERM or SIGINT.
// At runtime: curl -d '' 'http://127.0.0.1:PORT/admin/mode?value=down' (or up) and
// curl http://127.0.0.1:PORT/admin/stats; with --record, curl http://127.0.0.1:PORT/admin/requests.
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "support/fake_im_server.h"

namespace {

bool ReadSecret(const std::string& path, std::string* out) {
  std::ifstream in(path);
  if (!in) {
    return false;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.pop_back();
  }
  *out = text;
  return !text.empty();
}

}  // namespace

int main(int argc, char** argv) {
  using room_outbox::testing::FakeImFault;
  using room_outbox::testing::FakeImServer;
  using room_outbox::testing::FakeImServerOptions;

  CLI::App app{"Fake Tencent IM send_group_msg server for demos and benchmarks"};
  FakeImServerOptions options;
  options.record_requests = false;  // counters only: a long benchmark must not grow memory
  options.record_bodies = false;
  std::string port_file;
  std::string secret_key_file;
  int64_t latency_ms = 0;
  std::string mode = "up";
  std::string down = "im";
  app.add_option("--port", options.port, "TCP port on 127.0.0.1 (0 = any free port)")
      ->check(CLI::Range(0, 65535));
  app.add_option("--port-file", port_file, "write the chosen port to this file");
  app.add_option("--sdk-app-id", options.sdk_app_id, "expected sdkappid");
  app.add_option("--identifier", options.identifier, "expected admin identifier");
  app.add_option("--secret-key-file", secret_key_file,
                 "file holding the secret key (else env ROOM_OUTBOX_TIM_SECRET_KEY, else the "
                 "built-in test key)");
  app.add_option("--group-id-prefix", options.group_id_prefix, "required GroupId prefix");
  app.add_option("--latency-ms", latency_ms, "delay before every answer")
      ->check(CLI::Range(int64_t{0}, int64_t{600000}));
  app.add_option("--mode", mode, "up: answer OK; down: answer errors")
      ->check(CLI::IsMember({"up", "down"}));
  app.add_option("--down", down, "what down answers: im (ErrorCode 10002) or http (HTTP 502)")
      ->check(CLI::IsMember({"im", "http"}));
  app.add_option("--threads", options.threads, "handler threads")->check(CLI::Range(2, 1024));
  bool record = false;
  app.add_flag("--record", record,
               "keep every valid request with its body for GET /admin/requests (tests; memory "
               "grows with the requests)");
  int64_t dedupe_window_ms = 0;
  app.add_option("--group-cap", options.group_cap_per_second,
                 "per-group messages per second, lower priorities dropped first (IM: 40; 0 = off)")
      ->check(CLI::Range(0, 100000));
  app.add_option("--dedupe-window-ms", dedupe_window_ms,
                 "dedupe on (GroupId, Random) within this window (IM: 300000; 0 = off)")
      ->check(CLI::Range(int64_t{0}, int64_t{3600000}));
  app.add_option("--app-limit", options.app_limit_per_second,
                 "the app's calls per second, all senders together, beyond which the stub answers "
                 "60007 (IM: 200; 0 = off)")
      ->check(CLI::Range(0, 100000));
  CLI11_PARSE(app, argc, argv);
  options.dedupe_window = std::chrono::milliseconds(dedupe_window_ms);
  options.record_requests = record;
  options.record_bodies = record;

  if (!secret_key_file.empty()) {
    if (!ReadSecret(secret_key_file, &options.secret_key)) {
      std::cerr << "im-stub: cannot read a secret key from " << secret_key_file << "\n";
      return 2;
    }
  } else if (const char* env = std::getenv("ROOM_OUTBOX_TIM_SECRET_KEY"); env && *env) {
    options.secret_key = env;
  }
  options.latency = std::chrono::milliseconds(latency_ms);
  options.down_fault = down == "http" ? FakeImFault::HttpStatus(502)
                                      : FakeImFault::ImError(10002, "internal error (im-stub down)");

  // Block the stop signals before any server thread starts, so they all inherit the mask and
  // only sigwait below sees SIGTERM/SIGINT.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  if (pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr) != 0) {
    std::cerr << "im-stub: pthread_sigmask failed\n";
    return 1;
  }

  FakeImServer server(options);
  if (!server.running()) {
    std::cerr << "im-stub: " << server.start_error() << "\n";
    return 1;
  }
  server.SetMode(mode);
  if (!port_file.empty()) {
    std::ofstream out(port_file + ".tmp");
    out << server.port() << "\n";
    out.close();
    // Rename so a script polling for the file never reads it half-written.
    if (!out || std::rename((port_file + ".tmp").c_str(), port_file.c_str()) != 0) {
      std::cerr << "im-stub: cannot write " << port_file << "\n";
      return 1;
    }
  }
  std::cout << "listening on " << server.endpoint() << std::endl;

  int signal_number = 0;
  if (sigwait(&stop_signals, &signal_number) != 0) {
    std::cerr << "im-stub: sigwait failed\n";
    return 1;
  }
  auto stats = server.Stats();
  std::cout << "stopping on signal " << signal_number << ": requests=" << stats.requests
            << " delivered=" << stats.delivered << " unique_event_ids=" << stats.unique_event_ids
            << " duplicates=" << stats.duplicates << " rejected=" << stats.rejected
            << " deduped=" << stats.deduped << " freq_dropped=" << stats.freq_dropped << std::endl;
  return 0;
}
