// Limits on input that nobody here controls: envelopes read back from room_outbox (written by
// other processes, or by hand during an incident), Tencent IM's HTTP answers, config and secret
// files. Each limit is far above anything legitimate and low enough that hostile input costs
// bounded memory and stack; a check that fails returns kInvalidArgument with a short message that
// names the limit and never quotes the input.
#pragma once

#include <cstddef>
#include <istream>
#include <string>
#include <string_view>

#include "core/result.h"

namespace room_outbox::core {

// An envelope's JSON text. Tencent IM refuses bodies above 12 KB, so an
// envelope this large can never be delivered; EncodeEnvelope applies the same limit so that the
// hook never writes a row the relay would refuse.
inline constexpr size_t kMaxEnvelopeBytes = 64 * 1024;
// Arrays and objects inside each other, the outermost counting as 1. nlohmann::json serialises
// recursively, so this bounds the stack a dump() can take.
inline constexpr size_t kMaxJsonDepth = 64;
// An IM answer is a few hundred bytes.
inline constexpr size_t kMaxImResponseBytes = 64 * 1024;
// conf/relay.toml is about 2 KB.
inline constexpr size_t kMaxConfigBytes = 1024 * 1024;
// A password or an IM secret key (64 hex characters) with its newline.
inline constexpr size_t kMaxSecretBytes = 4 * 1024;

// The deepest nesting of JSON arrays and objects in `text`, brackets inside strings not counted.
// Stops counting once the depth passes `stop_above` (the result is then stop_above + 1). Works on
// any bytes; it does not validate the JSON.
size_t JsonNestingDepth(std::string_view text, size_t stop_above);

// OK when `text` has at most `max_bytes` bytes; otherwise kInvalidArgument
// "<what>: <n> bytes, more than the limit of <max>".
Status CheckJsonSize(std::string_view what, std::string_view text, size_t max_bytes);

// OK when `text` has at most `max_bytes` bytes and at most `max_depth` levels of nesting;
// otherwise kInvalidArgument "<what>: <n> bytes, more than the limit of <max>" or
// "<what>: nested deeper than <max> levels".
Status CheckJsonLimits(std::string_view what, std::string_view text, size_t max_bytes,
                       size_t max_depth = kMaxJsonDepth);

// Reads all of `in` but fails (kInvalidArgument "<what> is larger than <max> bytes") as soon as
// more than `max_bytes` arrive, so a huge or endless file (a device, a pipe) costs bounded memory.
Result<std::string> ReadBounded(std::istream& in, size_t max_bytes, std::string_view what);

// The content of a secret file: at most kMaxSecretBytes, one trailing "\n" or "\r\n" trimmed, and
// then no control byte at all (a NUL, a second line, a stray "\r"), because any of them would be
// sent as part of the password or key and fail far from the cause. The error names `what` and
// the byte offset, never the content.
Result<std::string> CheckSecretContent(std::string_view what, std::string content);

}  // namespace room_outbox::core
