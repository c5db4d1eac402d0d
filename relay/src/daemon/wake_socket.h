// WakeSocket: the relay's end of `[wake] socket = PATH`, a unix datagram socket bound at PATH.
// The hook (WakeSender) sends it one datagram whenever a commit leaves rows for the relay; the
// content is ignored, each datagram only means "look now".
//
// Binding (Bind):
//   - nothing at PATH: bound there;
//   - a socket nobody is bound to (the file a killed relay left behind): removed and replaced;
//   - a socket some process is bound to (another relay with the same path): refused
//     (kAlreadyExists), never taken over;
//   - anything else (a regular file, a directory, a symlink, ...): refused (kInvalidArgument),
//     never removed.
//   The socket file gets the mode asked for ([wake] socket_mode, 0660 by default) whatever the
//   umask: a room-service running as another user must be able to send (write permission on the
//   file). A datagram carries nothing and can only make the relay look for due rows before its
//   poll_interval, at most once per WakeGap (worker/wake_gap.h), so the file grants nothing more.
//   Who may send: the mode with the file's group (the relay's group, or the directory's when it
//   is setgid), and the mode of the directory (systemd RuntimeDirectoryMode=).
// Errors name the path and the failing call with the system's text (strerror).
//
// The destructor closes the socket and removes PATH, unless the file there is no longer the one
// this object bound (replaced by someone else).
//
// Thread-safety: Drain may run on one thread at a time; the object is otherwise immutable.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <string>

#include "core/fd.h"
#include "core/result.h"

namespace room_outbox::relay {

class WakeSocket {
 public:
  // Binds PATH as described above and gives the file `mode` (permission bits, at most 0777).
  // PATH must pass CheckWakeSocketPath (absolute, fits sun_path).
  static core::Result<std::unique_ptr<WakeSocket>> Bind(const std::string& path, mode_t mode);
  ~WakeSocket();
  WakeSocket(const WakeSocket&) = delete;
  WakeSocket& operator=(const WakeSocket&) = delete;

  const std::string& path() const { return path_; }
  // The non-blocking socket, for poll().
  int fd() const { return fd_.get(); }

  // Reads every datagram queued now, at most `max_datagrams`, without blocking; returns how many
  // it read (0 when none was queued).
  size_t Drain(size_t max_datagrams = 1024);

 private:
  WakeSocket(std::string path, core::Fd fd, dev_t dev, ino_t ino);

  std::string path_;
  core::Fd fd_;
  dev_t dev_;  // identity of the socket file bound, checked before it is removed
  ino_t ino_;
};

}  // namespace room_outbox::relay
