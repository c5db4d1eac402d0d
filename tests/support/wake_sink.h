// WakeSink: a unix datagram socket bound where the relay's [wake] socket would be, in a private
// temporary directory (removed with the sink), for tests of the hook's wake-ups: it counts the
// datagrams that arrive.
#pragma once

#include <cstddef>
#include <string>

#include "core/fd.h"

namespace room_outbox::testing {

class WakeSink {
 public:
  WakeSink();
  ~WakeSink();
  WakeSink(const WakeSink&) = delete;
  WakeSink& operator=(const WakeSink&) = delete;

  bool bound() const { return bound_; }
  const std::string& path() const { return path_; }
  // A path in the same directory where nothing is bound.
  std::string unbound_path() const { return dir_ + "/nobody.sock"; }
  // Reads every datagram waiting now; returns how many there were.
  size_t Drain();

 private:
  std::string dir_;
  std::string path_;
  core::Fd fd_;
  bool bound_ = false;
};

}  // namespace room_outbox::testing
