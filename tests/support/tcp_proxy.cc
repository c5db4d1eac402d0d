#include "support/tcp_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <utility>

namespace room_outbox::testing {
namespace {

constexpr unsigned char kComQuery = 0x03;

std::string Errno(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// A connected unix stream socket, or none.
core::Fd ConnectUnix(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) {
    return core::Fd();
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  core::Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd || ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    return core::Fd();
  }
  return fd;
}

// True for a COM_QUERY payload whose text is COMMIT (any case, surrounding blanks allowed).
bool IsCommit(std::string_view payload) {
  if (payload.empty() || static_cast<unsigned char>(payload[0]) != kComQuery) {
    return false;
  }
  std::string_view text = payload.substr(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() &&
         (std::isspace(static_cast<unsigned char>(text.back())) || text.back() == ';')) {
    text.remove_suffix(1);
  }
  constexpr std::string_view kCommit = "COMMIT";
  return text.size() == kCommit.size() &&
         std::equal(text.begin(), text.end(), kCommit.begin(), [](char a, char b) {
           return std::toupper(static_cast<unsigned char>(a)) == b;
         });
}

}  // namespace

TcpProxy::TcpProxy(std::string upstream_socket) : upstream_(std::move(upstream_socket)) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    start_error_ = Errno("pipe2");
    return;
  }
  stop_read_ = core::Fd(pipe_fds[0]);
  stop_write_ = core::Fd(pipe_fds[1]);
  core::Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) {
    start_error_ = Errno("socket");
    return;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(fd.get(), 16) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    start_error_ = Errno("bind/listen 127.0.0.1");
    return;
  }
  port_ = ntohs(addr.sin_port);
  listen_ = std::move(fd);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

TcpProxy::~TcpProxy() {
  stop_write_ = core::Fd();  // closed: every poll() sees POLLHUP on the read end
  if (acceptor_.joinable()) {
    acceptor_.join();
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (std::thread& t : threads_) {
    t.join();
  }
  // The listening socket and the pipe's read end close with their owners, after every thread.
}

void TcpProxy::Arm(Fault fault, int nth) {
  std::lock_guard<std::mutex> lock(commit_mu_);
  fault_ = fault;
  fault_at_ = commits_seen_ + nth;
}

void TcpProxy::BeforeCommit(int nth, std::function<void()> action) {
  std::lock_guard<std::mutex> lock(commit_mu_);
  before_ = std::move(action);
  before_at_ = commits_seen_ + nth;
}

void TcpProxy::SetUpstream(std::string upstream_socket) {
  std::lock_guard<std::mutex> lock(commit_mu_);
  upstream_ = std::move(upstream_socket);
}

std::string TcpProxy::Upstream() const {
  std::lock_guard<std::mutex> lock(commit_mu_);
  return upstream_;
}

int TcpProxy::commits_seen() const {
  std::lock_guard<std::mutex> lock(commit_mu_);
  return commits_seen_;
}

TcpProxy::Fault TcpProxy::OnCommit() {
  std::function<void()> action;
  Fault fault = Fault::kNone;
  {
    std::lock_guard<std::mutex> lock(commit_mu_);
    ++commits_seen_;
    if (fault_ != Fault::kNone && commits_seen_ == fault_at_) {
      fault = std::exchange(fault_, Fault::kNone);
    }
    if (before_ && commits_seen_ == before_at_) {
      action = std::exchange(before_, nullptr);
    }
  }
  if (action) {
    action();  // outside the lock: it may take its time (a statement on another connection)
  }
  return fault;
}

void TcpProxy::AcceptLoop() {
  for (;;) {
    pollfd fds[2] = {{listen_.get(), POLLIN, 0}, {stop_read_.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) {
        continue;
      }
      return;
    }
    if (fds[1].revents != 0) {
      return;
    }
    core::Fd client(::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!client || refuse_.load()) {
      continue;  // a refused connection closes at once
    }
    connections_.fetch_add(1);
    std::lock_guard<std::mutex> lock(mu_);
    threads_.emplace_back([this, c = std::move(client)]() mutable { Pump(std::move(c)); });
  }
}

void TcpProxy::Pump(core::Fd client) {
  core::Fd server = ConnectUnix(Upstream());
  if (!server) {
    return;  // the client sees the connection closed at once
  }
  std::string pending;  // client bytes not yet forwarded (an incomplete packet)
  char buf[16384];
  for (;;) {
    pollfd fds[3] = {
        {client.get(), POLLIN, 0}, {server.get(), POLLIN, 0}, {stop_read_.get(), POLLIN, 0}};
    if (::poll(fds, 3, -1) < 0) {
      if (errno == EINTR) {
        continue;
      }
      return;
    }
    if (fds[2].revents != 0) {
      return;
    }
    if (fds[0].revents != 0) {
      const ssize_t n = ::recv(client.get(), buf, sizeof buf, 0);
      if (n <= 0) {
        return;
      }
      pending.append(buf, static_cast<size_t>(n));
      if (!ForwardClientPackets(pending, server.get())) {
        return;  // both ends close here, before the server's reply is read
      }
    }
    if (fds[1].revents != 0) {
      const ssize_t n = ::recv(server.get(), buf, sizeof buf, 0);
      if (n <= 0 || !WriteAll(client.get(), buf, static_cast<size_t>(n))) {
        return;
      }
    }
  }
}

bool TcpProxy::ForwardClientPackets(std::string& pending, int server_fd) {
  size_t at = 0;
  while (pending.size() - at >= 4) {
    const auto* p = reinterpret_cast<const unsigned char*>(pending.data() + at);
    const size_t length = p[0] | (size_t{p[1]} << 8) | (size_t{p[2]} << 16);
    if (pending.size() - at < 4 + length) {
      break;
    }
    const Fault fault =
        IsCommit(std::string_view(pending).substr(at + 4, length)) ? OnCommit() : Fault::kNone;
    if (fault == Fault::kDropCommit) {
      commits_dropped_.fetch_add(1);
      return false;
    }
    if (!WriteAll(server_fd, pending.data() + at, 4 + length)) {
      return false;
    }
    at += 4 + length;
    if (fault == Fault::kDropReply) {
      commits_dropped_.fetch_add(1);
      return false;
    }
  }
  pending.erase(0, at);
  return true;
}

}  // namespace room_outbox::testing
