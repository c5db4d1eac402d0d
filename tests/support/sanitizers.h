// What a test needs to know about the sanitizer build it runs in (cmake/sanitizers.cmake defines
// ROOM_OUTBOX_SANITIZED, ROOM_OUTBOX_SANITIZED_ADDRESS and ROOM_OUTBOX_SANITIZED_THREAD).
//
// A test that cannot run under a sanitizer skips itself with a reason, e.g. one that starts a
// child with LD_PRELOAD=libfaketime.so: the ASan runtime must come first in the initial library
// list and aborts otherwise, and a preloaded clock under TSan's interceptors is not what the test
// means to measure.
//   ROOM_OUTBOX_SKIP_UNDER_SANITIZERS("LD_PRELOAD of libfaketime next to the sanitizer runtime");
#pragma once

namespace room_outbox::testing {

#if defined(ROOM_OUTBOX_SANITIZED)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace room_outbox::testing

#define ROOM_OUTBOX_SKIP_UNDER_SANITIZERS(reason)                        \
  do {                                                                   \
    if (::room_outbox::testing::kSanitized) {                            \
      GTEST_SKIP() << "skipped in a sanitizer build: " << (reason);      \
    }                                                                    \
  } while (0)
