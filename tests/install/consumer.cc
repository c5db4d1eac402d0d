// A stand-alone room-service stub built only from the installed hook: its headers, its static
// library and its pkg-config file. It must compile, link and run; with no database it reports
// the connection error and exits 3.
#include <curl/curl.h>
#include <mysql.h>

#include <cstdio>

#include "room_outbox/hook.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer SOCKET\n");
    return 2;
  }
  mysql_library_init(0, nullptr, nullptr);
  curl_global_init(CURL_GLOBAL_DEFAULT);
  room_outbox::HookOptions options;
  options.mysql.socket = argv[1];
  options.tencent_im.sdk_app_id = 1400000000;
  options.tencent_im.secret_key = "consumer-test-key";
  room_outbox::Error error;
  auto hook = room_outbox::CreateHook(options, &error);
  const bool connected = hook != nullptr;
  std::printf("%s: %s\n", connected ? "connected" : "not connected", error.message.c_str());
  hook.reset();
  curl_global_cleanup();
  mysql_library_end();
  return connected ? 0 : 3;
}
