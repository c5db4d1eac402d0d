// The fuzz targets: one function per parser of outside input, each taking arbitrary bytes and
// checking its parser's invariants. A violated invariant prints what failed and aborts, which
// libFuzzer reports as a crash (and saves the input).
//
// The same functions are the libFuzzer entry points (tests/fuzz/fuzz_main.cc, one binary per
// target, `make fuzz`) and the corpus replay in the normal suite (tests/unit/fuzz_corpus_test.cc,
// every file under tests/fuzz/corpus/<name>/), so an input that once crashed stays a test.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace room_outbox::fuzz {

using Target = int (*)(const uint8_t* data, size_t size);

// DecodeEnvelope on any bytes; when it decodes, encoding it again is stable.
int EnvelopeDecode(const uint8_t* data, size_t size);
// An Envelope built from the bytes: EncodeEnvelope, DecodeEnvelope, EncodeEnvelope again gives
// the same fields and the same bytes, the payload written as dump() of its parse writes it.
int EnvelopeRoundTrip(const uint8_t* data, size_t size);
// ClassifyImResponse(HTTP status from the first two bytes, body = the rest).
int ImResponse(const uint8_t* data, size_t size);
// LoadConfig on the bytes as a TOML file: a config, or an error; TOML syntax errors name
// path:line:col. An accepted config's effective rendering loads again to the same rendering.
int ConfigLoad(const uint8_t* data, size_t size);
// ParseDuration; an accepted duration formats and parses back to the same value.
int Duration(const uint8_t* data, size_t size);
// The UserSig codec: DecodeUserSig/VerifyUserSig on any bytes (first byte 0), or
// GenUserSig -> DecodeUserSig -> VerifyUserSig round trip on fields taken from the bytes.
int UserSig(const uint8_t* data, size_t size);
// LogLine rendering of any value: text lines hold no control byte, JSON lines parse back.
int LogLineRender(const uint8_t* data, size_t size);

struct NamedTarget {
  std::string_view name;  // also the corpus directory name under tests/fuzz/corpus/
  Target target;
};
inline constexpr NamedTarget kTargets[] = {
    {"envelope_decode", EnvelopeDecode}, {"envelope_roundtrip", EnvelopeRoundTrip},
    {"im_response", ImResponse},         {"config_load", ConfigLoad},
    {"duration", Duration},              {"usersig", UserSig},
    {"log_line", LogLineRender},
};

}  // namespace room_outbox::fuzz
