// libFuzzer entry point of one target; ROOM_OUTBOX_FUZZ_TARGET names its function in
// fuzz_targets.h (set per executable by cmake/fuzz.cmake).
#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return room_outbox::fuzz::ROOM_OUTBOX_FUZZ_TARGET(data, size);
}
