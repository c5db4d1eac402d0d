// Loopback HTTP for the tests that start a relay with a [metrics] listener: a free port to give
// it, and a plain GET of one of its endpoints.
#pragma once

#include <string>

namespace room_outbox::testing {

// A loopback port nobody listens on right now.
int FreePort();

struct HttpAnswer {
  int status = 0;  // 0: no answer
  std::string body;
};

// GET http://127.0.0.1:port/path, 2 s to connect, 5 s to read; status 0 without an answer.
HttpAnswer Get(int port, const std::string& path);

}  // namespace room_outbox::testing
