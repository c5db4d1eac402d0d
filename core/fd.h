// Fd: the owner of one file descriptor (a socket, an eventfd). Move-only; closes on destruction.
#pragma once

#include <unistd.h>

#include <utility>

namespace room_outbox::core {

class Fd {
 public:
  Fd() = default;
  // Takes ownership of `fd` (a negative value: none, e.g. a failed socket() call).
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) {
      (void)::close(fd_);  // nothing to do about a failed close of a descriptor we give up
    }
  }
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept {
    Fd(std::move(other)).swap(*this);
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }
  void swap(Fd& other) noexcept { std::swap(fd_, other.fd_); }

 private:
  int fd_ = -1;
};

}  // namespace room_outbox::core
