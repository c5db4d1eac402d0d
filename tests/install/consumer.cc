// A stand-alone room-service stub built only from the installed hook: its headers, one of its
// libraries (shared or static) and its pkg-config or CMake package files. It must compile, link
// and run; with no database it reports the connection error and exits 3. It calls no C library
// itself (LibraryInit does the process-wide setup), so a link against the shared library needs
// nothing but the hook.
#include <cstdio>

#include "room_outbox/hook.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer SOCKET\n");
    return 2;
  }
  room_outbox::LibraryInit library;
  if (!library.status().ok()) {
    std::fprintf(stderr, "%s\n", library.status().error().message.c_str());
    return 1;
  }
  room_outbox::HookOptions options;
  options.mysql.socket = argv[1];
  options.tencent_im.sdk_app_id = 1400000000;
  options.tencent_im.secret_key = "consumer-test-key";
  room_outbox::Error error;
  auto hook = room_outbox::CreateHook(options, &error);
  const bool connected = hook != nullptr;
  std::printf("%s: %s\n", connected ? "connected" : "not connected", error.message.c_str());
  return connected ? 0 : 3;
}
