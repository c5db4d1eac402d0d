#include "core/config/secrets.h"

#include <cstdlib>
#include <filesystem>

#include "core/config/secret_file.h"
#include "core/wipe.h"

namespace room_outbox::core {
namespace {

const char* CredentialsDirectory() {
  const char* creds = std::getenv("CREDENTIALS_DIRECTORY");
  return creds != nullptr && creds[0] != '\0' ? creds : nullptr;
}

void AddWarning(std::vector<std::string>* warnings, std::string warning) {
  if (warnings != nullptr && !warning.empty()) {
    warnings->push_back(std::move(warning));
  }
}

}  // namespace

std::string ResolveSecretPath(const std::string& name, const std::string& config_path) {
  std::filesystem::path p(name);
  if (p.is_absolute()) {
    return p.string();
  }
  if (const char* creds = CredentialsDirectory()) {
    return (std::filesystem::path(creds) / p).string();
  }
  return (std::filesystem::path(config_path).parent_path() / p).string();
}

bool IsCredentialCopy(const std::string& file, const std::string& config_path) {
  const char* creds = CredentialsDirectory();
  if (file.empty() || creds == nullptr) {
    return false;
  }
  const std::filesystem::path resolved =
      std::filesystem::path(ResolveSecretPath(file, config_path)).lexically_normal();
  const std::filesystem::path dir = std::filesystem::path(creds).lexically_normal();
  const auto rel = resolved.lexically_relative(dir);
  return !rel.empty() && *rel.begin() != "..";
}

Result<std::string> ResolveReadableFile(const std::string& key, const std::string& file,
                                        const std::string& config_path, FileRule rule,
                                        std::vector<std::string>* warnings) {
  if (file.empty()) {
    return std::string();
  }
  std::string path = ResolveSecretPath(file, config_path);
  auto checked = CheckLibraryFile(key, path, rule);
  if (!checked) {
    return Fail(checked.error());
  }
  AddWarning(warnings, std::move(*checked));
  return path;
}

Result<std::string> LoadSecret(const std::string& key, const std::string& file,
                               const char* env_name, const std::string& config_path,
                               std::vector<std::string>* warnings) {
  SecretOwner<std::string> secret;
  if (!file.empty()) {
    auto read = ReadSecretFile(key, ResolveSecretPath(file, config_path));
    if (!read) {
      return Fail(read.error());
    }
    ReplaceSecret(secret, std::move(read->content));
    AddWarning(warnings, std::move(read->warning));
  }
  const char* env = std::getenv(env_name);
  if (env != nullptr && env[0] != '\0') {
    ReplaceSecret(secret, std::string(env));
  }
  Result<std::string> loaded(std::move(static_cast<std::string&>(secret)));
  return loaded;  // `secret` wipes what the move left behind
}

}  // namespace room_outbox::core
