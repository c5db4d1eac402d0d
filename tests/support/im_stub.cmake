# The fake Tencent IM (support/fake_im_server.h) as a library of its own, and im-stub, the fake as
# a process: the demo, the benchmarks, the Go tests and the container checks run it. Both need
# only what the relay needs (core, cpp-httplib, CLI11), so they build with the relay whether the
# tests are on or not; without the tests im-stub is left out of `all` and built by name
# (`--target im-stub`, as the container image's builder does).
add_library(room_outbox_fake_im STATIC
  tests/support/fake_im_message.cc
  tests/support/fake_im_server.cc)
target_include_directories(room_outbox_fake_im PUBLIC ${PROJECT_SOURCE_DIR}/tests)
target_link_libraries(room_outbox_fake_im
  PUBLIC room_outbox_core PkgConfig::HTTPLIB
  PRIVATE room_outbox_build_settings)

if(ROOM_OUTBOX_BUILD_TESTS)
  add_executable(im-stub tests/support/im_stub_main.cc)
else()
  add_executable(im-stub EXCLUDE_FROM_ALL tests/support/im_stub_main.cc)
endif()
target_link_libraries(im-stub PRIVATE room_outbox_fake_im CLI11::CLI11 room_outbox_build_settings)
