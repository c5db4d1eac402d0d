// FakeMysqlServer: a TCP listener on loopback that speaks only the first steps of the MySQL
// protocol, for the tests of what a client sends before and during authentication (which a real
// server cannot show): it sends a protocol-10 handshake WITHOUT the CLIENT_SSL capability, then,
// as configured, answers the client's login packet with an authentication switch request to
// another plugin (e.g. mysql_clear_password), and records every byte the client sent until the
// client closes the connection. One connection per server.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "core/fd.h"

namespace room_outbox::testing {

class FakeMysqlServer {
 public:
  // `switch_to_plugin`: the plugin the server asks for after the login packet ("" = close
  // without answering).
  explicit FakeMysqlServer(std::string switch_to_plugin = "");
  ~FakeMysqlServer();
  FakeMysqlServer(const FakeMysqlServer&) = delete;
  FakeMysqlServer& operator=(const FakeMysqlServer&) = delete;

  uint16_t port() const { return port_; }
  // Every byte the client sent (after the server's handshake), once the connection has ended.
  // Waits up to 30 s for that end.
  std::string Received();
  // How many packets the client sent.
  int packets();

 private:
  void Serve();

  std::string switch_to_;
  core::Fd listener_;
  uint16_t port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::string received_;
  int packets_ = 0;
};

}  // namespace room_outbox::testing
