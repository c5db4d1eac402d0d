#include "fuzz_targets.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <toml++/toml.h>

#include "config/config.h"
#include "core/config/duration.h"
#include "core/envelope_codec.h"
#include "core/fd.h"
#include "core/input_limits.h"
#include "core/tencent/im_response.h"
#include "core/tencent/usersig.h"
#include "telemetry/log_line.h"

namespace room_outbox::fuzz {
namespace {

[[noreturn]] void InvariantFailed(const char* what, const char* file, int line,
                                  const std::string& detail) {
  std::fprintf(stderr, "fuzz invariant failed at %s:%d: %s\n  %s\n", file, line, what,
               detail.c_str());
  std::abort();
}

#define FUZZ_CHECK(cond, detail)                                    \
  do {                                                              \
    if (!(cond)) InvariantFailed(#cond, __FILE__, __LINE__, detail); \
  } while (0)

// Takes fields off the front of the input: a string is a length byte and that many bytes.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size)
      : rest_(reinterpret_cast<const char*>(data), size) {}

  std::string Str() {
    if (rest_.empty()) return {};
    size_t n = static_cast<unsigned char>(rest_.front());
    rest_.remove_prefix(1);
    n = std::min(n, rest_.size());
    std::string out(rest_.substr(0, n));
    rest_.remove_prefix(n);
    return out;
  }
  template <class T>
  T Int() {
    T out = 0;
    const size_t n = std::min(sizeof(T), rest_.size());
    std::memcpy(&out, rest_.data(), n);
    rest_.remove_prefix(n);
    return out;
  }
  std::string Rest() {
    std::string out(rest_);
    rest_ = {};
    return out;
  }

 private:
  std::string_view rest_;
};

bool ValidUtf8(const std::string& s) {
  try {
    (void)nlohmann::json(s).dump();
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

bool HasControlByte(std::string_view s) {
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) return true;
  }
  return false;
}

void CheckSameEnvelope(const Envelope& a, const Envelope& b) {
  FUZZ_CHECK(a.event_id == b.event_id, a.event_id);
  FUZZ_CHECK(a.event_type == b.event_type, a.event_type);
  FUZZ_CHECK(a.room_id == b.room_id, a.room_id);
  FUZZ_CHECK(a.room_seq == b.room_seq, std::to_string(a.room_seq));
  FUZZ_CHECK(a.command_id == b.command_id, a.command_id);
  FUZZ_CHECK(a.request_id == b.request_id, a.request_id);
  FUZZ_CHECK(a.node_id == b.node_id, a.node_id);
  FUZZ_CHECK(a.occurred_at_ms == b.occurred_at_ms, std::to_string(a.occurred_at_ms));
  FUZZ_CHECK(a.payload == b.payload, a.payload + " vs " + b.payload);
}

// A config file in a directory of its own, created once per process and removed at exit. The
// input's relative paths (secret files) resolve inside it, to nothing: a file under
// /proc/self/fd would make them name this process's descriptors, a pipe among them.
class ScratchFile {
 public:
  explicit ScratchFile(const char* name) : dir_(MakeDir()), path_(dir_ + "/" + name) {
    fd_ = core::Fd(open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (!fd_) {
      std::perror("open scratch config");
      std::abort();
    }
  }
  ~ScratchFile() {
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  const std::string& Write(std::string_view text) {
    if (ftruncate(fd_.get(), 0) != 0 ||
        pwrite(fd_.get(), text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
      std::perror("scratch config write");
      std::abort();
    }
    return path_;
  }

 private:
  static std::string MakeDir() {
    char dir[] = "/tmp/fuzz-config-XXXXXX";
    if (mkdtemp(dir) == nullptr) {
      std::perror("mkdtemp");
      std::abort();
    }
    return dir;
  }

  std::string dir_;
  std::string path_;
  core::Fd fd_;
};

// The rendering without its first line, which names the file it came from.
std::string WithoutHeader(const std::string& rendered) {
  const size_t nl = rendered.find('\n');
  return nl == std::string::npos ? std::string() : rendered.substr(nl + 1);
}

// Undoes the text log format's quoting of one value.
std::string UnquoteLogValue(std::string_view v) {
  if (v.empty() || v.front() != '"') return std::string(v);
  FUZZ_CHECK(v.size() >= 2 && v.back() == '"', std::string(v));
  v = v.substr(1, v.size() - 2);
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] != '\\') {
      out += v[i];
      continue;
    }
    FUZZ_CHECK(i + 1 < v.size(), std::string(v));
    const char e = v[++i];
    switch (e) {
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case 'x': {
        FUZZ_CHECK(i + 2 < v.size(), std::string(v));
        out += static_cast<char>(std::stoi(std::string(v.substr(i + 1, 2)), nullptr, 16));
        i += 2;
        break;
      }
      default: FUZZ_CHECK(false, std::string(v));
    }
  }
  return out;
}

}  // namespace

int EnvelopeDecode(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto decoded = core::DecodeEnvelope(text);
  if (!decoded) {
    FUZZ_CHECK(decoded.error().code == ErrorCode::kInvalidArgument, decoded.error().message);
    FUZZ_CHECK(!decoded.error().message.empty(), "");
    return 0;
  }
  FUZZ_CHECK(!decoded->event_id.empty() && !decoded->event_type.empty() &&
                 !decoded->room_id.empty(),
             "decoded an envelope with an empty key field");
  auto encoded = core::EncodeEnvelope(*decoded);
  if (!encoded) {
    // Only the size limit may refuse what decoded: compact output can still grow ("1E2" is
    // written "100.0").
    FUZZ_CHECK(encoded.error().message.find("limit") != std::string::npos,
               encoded.error().message);
    return 0;
  }
  auto again = core::DecodeEnvelope(*encoded);
  FUZZ_CHECK(again.has_value(), again ? "" : again.error().message);
  CheckSameEnvelope(*decoded, *again);
  auto encoded_again = core::EncodeEnvelope(*again);
  FUZZ_CHECK(encoded_again && *encoded_again == *encoded, *encoded);
  return 0;
}

int EnvelopeRoundTrip(const uint8_t* data, size_t size) {
  Reader r(data, size);
  Envelope e;
  e.event_id = r.Str();
  e.event_type = r.Str();
  e.room_id = r.Str();
  e.room_seq = r.Int<int64_t>();
  e.command_id = r.Str();
  e.request_id = r.Str();
  e.node_id = r.Str();
  e.occurred_at_ms = r.Int<int64_t>();
  e.payload = r.Rest();
  auto encoded = core::EncodeEnvelope(e);
  if (!encoded) {
    FUZZ_CHECK(encoded.error().code == ErrorCode::kInvalidArgument, encoded.error().message);
    return 0;
  }
  FUZZ_CHECK(encoded->size() <= core::kMaxEnvelopeBytes, std::to_string(encoded->size()));
  auto decoded = core::DecodeEnvelope(*encoded);
  if (e.event_id.empty() || e.event_type.empty() || e.room_id.empty()) {
    FUZZ_CHECK(!decoded, "an envelope with an empty key field decoded");
    return 0;
  }
  FUZZ_CHECK(decoded.has_value(), decoded ? "" : decoded.error().message);
  Envelope expected = e;
  expected.payload = nlohmann::json::parse(e.payload).dump();
  CheckSameEnvelope(expected, *decoded);
  // The payload's bytes are dump()'s of its parse, whether its keys came sorted or not.
  FUZZ_CHECK(encoded->ends_with("\"payload\":" + expected.payload + "}"), *encoded);
  auto encoded_again = core::EncodeEnvelope(*decoded);
  FUZZ_CHECK(encoded_again && *encoded_again == *encoded, *encoded);
  return 0;
}

int ImResponse(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const int http_status = ((data[0] << 8) | data[1]) % 1000;
  const std::string_view body(reinterpret_cast<const char*>(data) + 2, size - 2);
  const core::PublishOutcome out = core::ClassifyImResponse(http_status, body);
  FUZZ_CHECK(out.http_status == http_status, std::to_string(out.http_status));
  FUZZ_CHECK(
      out.status != core::PublishStatus::kSkipped && out.status != core::PublishStatus::kUnknown,
      core::PublishStatusName(out.status));
  FUZZ_CHECK(out.error.size() <= 200, out.error);
  FUZZ_CHECK(!HasControlByte(out.error), out.error);
  FUZZ_CHECK(ValidUtf8(out.error), out.error);
  if (out.status == core::PublishStatus::kPublished) {
    FUZZ_CHECK(http_status == 200 && out.error.empty() && out.im_error_code == 0, out.error);
    // Success only when the body itself says so, with no non-zero integer ErrorCode.
    const auto doc = nlohmann::json::parse(body, nullptr, false);
    FUZZ_CHECK(doc.is_object() && doc.value("ActionStatus", nlohmann::json()) == "OK",
               std::string(body.substr(0, 200)));
    if (auto it = doc.find("ErrorCode"); it != doc.end() && it->is_number_integer()) {
      FUZZ_CHECK(*it == 0, it->dump());
    }
  } else {
    FUZZ_CHECK(!out.error.empty(), core::PublishStatusName(out.status));
  }
  return 0;
}

int ConfigLoad(const uint8_t* data, size_t size) {
  static const bool env_cleared = [] {
    // Secrets come from the input's files only; no environment of the fuzzing host.
    for (const char* name : {"ROOM_OUTBOX_MYSQL_PASSWORD", "ROOM_OUTBOX_TIM_SECRET_KEY",
                             "CREDENTIALS_DIRECTORY"}) {
      unsetenv(name);
    }
    return true;
  }();
  (void)env_cleared;
  static ScratchFile input("relay.toml");
  static ScratchFile rendered_file("rendered.toml");
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string& path = input.Write(text);
  auto config = relay::LoadConfig(path);
  if (!config) {
    FUZZ_CHECK(!config.error().message.empty(), "");
    bool syntax_error = false;
    try {
      (void)toml::parse(text, path);
    } catch (const toml::parse_error&) {
      syntax_error = true;
    }
    if (syntax_error) {
      // path:line:col: description
      const std::string& m = config.error().message;
      FUZZ_CHECK(m.rfind(path + ":", 0) == 0, m);
      size_t i = path.size() + 1;
      size_t digits = 0;
      for (int part = 0; part < 2; ++part, ++i) {
        for (digits = 0; i < m.size() && m[i] >= '0' && m[i] <= '9'; ++i) ++digits;
        FUZZ_CHECK(digits > 0 && i < m.size() && m[i] == ':', m);
      }
    }
    return 0;
  }
  const std::string rendered = relay::RenderEffectiveConfig(*config);
  auto reloaded = relay::LoadConfig(rendered_file.Write(rendered));
  FUZZ_CHECK(reloaded.has_value(),
             (reloaded ? std::string() : reloaded.error().message) + "\n" + rendered);
  const std::string rendered_again = relay::RenderEffectiveConfig(*reloaded);
  FUZZ_CHECK(WithoutHeader(rendered_again) == WithoutHeader(rendered),
             rendered + "\n---\n" + rendered_again);
  return 0;
}

int Duration(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = core::ParseDuration(text);
  if (!parsed) {
    FUZZ_CHECK(parsed.error().code == ErrorCode::kInvalidArgument, parsed.error().message);
    return 0;
  }
  FUZZ_CHECK(*parsed <= core::kMaxDuration && *parsed >= -core::kMaxDuration,
             std::string(text) + " parsed beyond kMaxDuration");
  const std::string formatted = core::FormatDuration(*parsed);
  auto again = core::ParseDuration(formatted);
  FUZZ_CHECK(again && *again == *parsed, std::string(text) + " -> " + formatted);
  return 0;
}

int UserSig(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0] & 1;
  Reader r(data + 1, size - 1);
  if (mode == 0) {
    const std::string text = r.Rest();
    auto decoded = core::DecodeUserSig(text);
    std::string why;
    const bool ok =
        core::VerifyUserSig(text, 1400000000, "administrator", "secret", 1700000000, &why);
    FUZZ_CHECK(!ok || decoded.has_value(), "verified a sig that does not decode");
    FUZZ_CHECK(ok || !why.empty(), "no reason");
    return 0;
  }
  const auto app = r.Int<uint64_t>();
  const auto time = r.Int<int64_t>();
  const auto expire = r.Int<int64_t>();
  const std::string identifier = r.Str();
  const std::string key = r.Str();
  const std::string userbuf = r.Rest();
  auto sig = core::GenUserSig(app, identifier, key, time, expire, userbuf);
  if (!sig) {
    FUZZ_CHECK(!ValidUtf8(identifier), sig.error().message);
    return 0;
  }
  for (char c : *sig) {
    const bool alnum = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    FUZZ_CHECK(alnum || c == '*' || c == '-' || c == '_', *sig);
  }
  auto decoded = core::DecodeUserSig(*sig);
  FUZZ_CHECK(decoded.has_value(), decoded ? "" : decoded.error().message);
  FUZZ_CHECK(decoded->version == "2.0", decoded->version);
  FUZZ_CHECK(decoded->identifier == identifier, decoded->identifier);
  FUZZ_CHECK(decoded->sdk_app_id == app, std::to_string(decoded->sdk_app_id));
  FUZZ_CHECK(decoded->time == time, std::to_string(decoded->time));
  FUZZ_CHECK(decoded->expire == expire, std::to_string(decoded->expire));
  FUZZ_CHECK(userbuf.empty() ? !decoded->userbuf : decoded->userbuf == userbuf, userbuf);
  // Valid from `time` for `expire` seconds: fine at its own start unless the validity is
  // negative; a wrong key never verifies.
  std::string why;
  FUZZ_CHECK(core::VerifyUserSig(*sig, app, identifier, key, time, &why) == (expire >= 0), why);
  FUZZ_CHECK(!core::VerifyUserSig(*sig, app, identifier, key + "x", time, &why),
             "wrong key verified");
  return 0;
}

int LogLineRender(const uint8_t* data, size_t size) {
  const std::string value(reinterpret_cast<const char*>(data), size);
  relay::LogLine line("event");
  line.Add("error", value);
  const std::string text = line.Render(relay::LogFormat::kText);
  FUZZ_CHECK(!HasControlByte(text), text);
  FUZZ_CHECK(text.rfind("event error=", 0) == 0, text);
  FUZZ_CHECK(UnquoteLogValue(std::string_view(text).substr(12)) == value, text);
  const std::string json = line.Render(relay::LogFormat::kJson);
  // JSON escapes what it must (below 0x20); DEL is legal JSON text and kept.
  FUZZ_CHECK(std::none_of(json.begin(), json.end(),
                          [](char c) { return static_cast<unsigned char>(c) < 0x20; }),
             json);
  const auto doc = nlohmann::json::parse(json, nullptr, false);
  FUZZ_CHECK(doc.is_object() && doc.contains("error") && doc["error"].is_string(), json);
  if (ValidUtf8(value)) {
    FUZZ_CHECK(doc["error"] == value, json);
  }
  return 0;
}

}  // namespace room_outbox::fuzz
