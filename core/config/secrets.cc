#include "core/config/secrets.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/input_limits.h"

namespace room_outbox::core {
namespace {

// Absolute as is; relative against $CREDENTIALS_DIRECTORY when systemd provides one, else
// against the config file's directory.
std::filesystem::path ResolveSecretPath(const std::string& name, const std::string& config_path) {
  std::filesystem::path p(name);
  if (p.is_absolute()) {
    return p;
  }
  const char* creds = std::getenv("CREDENTIALS_DIRECTORY");
  if (creds != nullptr && creds[0] != '\0') {
    return std::filesystem::path(creds) / p;
  }
  return std::filesystem::path(config_path).parent_path() / p;
}

// The error names the key and the path; the content never appears.
Result<std::string> ReadSecretFile(const std::string& key, const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    return Fail(ErrorCode::kInvalidArgument, key + ": cannot read \"" + path.string() + "\": " +
                                                 (err != 0 ? std::strerror(err) : "open failed"));
  }
  auto content = ReadBounded(in, kMaxSecretBytes, key + ": \"" + path.string() + "\"");
  return content ? CheckSecretContent(key + ": \"" + path.string() + "\"", std::move(*content))
                 : content;
}

}  // namespace

Result<std::string> ResolveReadableFile(const std::string& key, const std::string& file,
                                        const std::string& config_path) {
  if (file.empty()) {
    return std::string();
  }
  const std::filesystem::path path = ResolveSecretPath(file, config_path);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    return Fail(ErrorCode::kInvalidArgument, key + ": cannot read \"" + path.string() + "\": " +
                                                 (err != 0 ? std::strerror(err) : "open failed"));
  }
  return path.string();
}

Result<std::string> LoadSecret(const std::string& key, const std::string& file,
                               const char* env_name, const std::string& config_path) {
  std::string secret;
  if (!file.empty()) {
    auto read = ReadSecretFile(key, ResolveSecretPath(file, config_path));
    if (!read) {
      return read;
    }
    secret = std::move(*read);
  }
  const char* env = std::getenv(env_name);
  if (env != nullptr && env[0] != '\0') {
    secret = env;
  }
  return secret;
}

}  // namespace room_outbox::core
