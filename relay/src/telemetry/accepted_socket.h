// The connection cpp-httplib's accept thread has just accepted. httplib 0.11 hands the accepted
// descriptor to its TaskQueue only inside the job it enqueues, so it is found among the process's
// descriptors instead: the one TCP socket that is connected (not listening), whose local port is
// the listener's, and whose socket inode (fstat st_ino) is not among those already known.
#pragma once

#include <sys/types.h>

#include <optional>
#include <set>

#include "core/fd.h"

namespace room_outbox::relay {

struct AcceptedSocket {
  core::Fd socket;  // a duplicate of the accepted descriptor (the same socket, a number of our own)
  ino_t inode = 0;
};

// The accepted socket on local port `listen_port` whose inode is not in `known`, duplicated
// (close-on-exec); nullopt unless there is exactly one (or it closed while it was duplicated).
// Sound only while one thread accepts on the listener and every accepted socket still open is in
// `known` but the newest one.
std::optional<AcceptedSocket> FindNewAcceptedSocket(int listen_port, const std::set<ino_t>& known);

}  // namespace room_outbox::relay
