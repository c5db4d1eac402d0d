#include "support/fake_mysql_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <utility>

namespace room_outbox::testing {
namespace {

// Capabilities of the handshake: a MySQL 4.1+ server with plugin authentication, and no
// CLIENT_SSL (0x800).
constexpr uint32_t kCapabilities =
    0x1 | 0x4 | 0x8 | 0x200 | 0x2000 | 0x8000 | (1u << 17) | (1u << 19) | (1u << 21);

std::string Packet(uint8_t seq, const std::string& payload) {
  std::string p;
  p.push_back(static_cast<char>(payload.size() & 0xff));
  p.push_back(static_cast<char>((payload.size() >> 8) & 0xff));
  p.push_back(static_cast<char>((payload.size() >> 16) & 0xff));
  p.push_back(static_cast<char>(seq));
  return p + payload;
}

std::string Handshake() {
  std::string h;
  h.push_back(10);
  h += std::string("8.0.99-fake") + '\0';
  h += std::string("\x01\x00\x00\x00", 4);  // connection id
  h += "abcdefgh";                          // auth data, part 1
  h.push_back('\0');
  h.push_back(static_cast<char>(kCapabilities & 0xff));
  h.push_back(static_cast<char>((kCapabilities >> 8) & 0xff));
  h.push_back(33);                  // utf8_general_ci
  h += std::string("\x02\x00", 2);  // status: autocommit
  h.push_back(static_cast<char>((kCapabilities >> 16) & 0xff));
  h.push_back(static_cast<char>((kCapabilities >> 24) & 0xff));
  h.push_back(21);  // auth data length
  h += std::string(10, '\0');
  h += std::string("ijklmnopqrst") + '\0';  // auth data, part 2
  h += std::string("mysql_native_password") + '\0';
  return Packet(0, h);
}

bool SendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

FakeMysqlServer::FakeMysqlServer(std::string switch_to_plugin)
    : switch_to_(std::move(switch_to_plugin)) {
  listener_ = core::Fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (!listener_ ||
      ::bind(listener_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listener_.get(), 1) != 0 ||
      ::getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ADD_FAILURE() << "FakeMysqlServer: cannot listen on loopback";
    return;
  }
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { Serve(); });
}

FakeMysqlServer::~FakeMysqlServer() {
  ::shutdown(listener_.get(), SHUT_RDWR);
  if (thread_.joinable()) thread_.join();
}

void FakeMysqlServer::Serve() {
  pollfd accept_wait{listener_.get(), POLLIN, 0};
  if (::poll(&accept_wait, 1, 60000) != 1) return;
  core::Fd conn(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
  if (!conn || !SendAll(conn.get(), Handshake())) return;
  bool switched = false;
  std::string pending;
  for (;;) {
    pollfd wait{conn.get(), POLLIN, 0};
    if (::poll(&wait, 1, 30000) != 1) return;
    char buf[4096];
    const ssize_t n = ::recv(conn.get(), buf, sizeof(buf), 0);
    if (n <= 0) break;  // the client closed the connection
    pending.append(buf, static_cast<size_t>(n));
    {
      std::lock_guard<std::mutex> lock(mu_);
      received_.append(buf, static_cast<size_t>(n));
    }
    // Whole packets: 3-byte length, 1-byte sequence, payload.
    while (pending.size() >= 4) {
      const size_t len = static_cast<uint8_t>(pending[0]) |
                         (static_cast<uint8_t>(pending[1]) << 8) |
                         (static_cast<uint8_t>(pending[2]) << 16);
      if (pending.size() < 4 + len) break;
      const auto seq = static_cast<uint8_t>(pending[3]);
      pending.erase(0, 4 + len);
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++packets_;
      }
      if (switched || switch_to_.empty()) {
        return;  // nothing more to say: closing ends the client's attempt
      }
      switched = true;
      std::string request = "\xfe" + switch_to_ + '\0' + "abcdefghijklmnopqrst" + '\0';
      if (!SendAll(conn.get(), Packet(static_cast<uint8_t>(seq + 1), request))) return;
    }
  }
}

std::string FakeMysqlServer::Received() {
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  return received_;
}

int FakeMysqlServer::packets() {
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  return packets_;
}

}  // namespace room_outbox::testing
