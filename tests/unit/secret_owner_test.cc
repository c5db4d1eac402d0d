// core::SecretOwner and the copies of the secrets it keeps: a destroyed, moved-from or
// assigned-over holder keeps no byte of its secret. Read through storage the test owns (an object
// placed into a byte array, whose bytes stay readable after the object is gone), with secrets short
// enough to live inside the std::string itself (at most 15 bytes), where a plain std::string leaves
// them. The reload path: FreedSecretWatch (tests/support/freed_secret_watch.h) sees every heap
// block freed while it is armed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <string_view>

#include "config/config.h"
#include "core/wipe.h"
#include "daemon/reload.h"
#include "support/config_fixture.h"
#include "support/freed_secret_watch.h"
#include "telemetry/log_line.h"

namespace room_outbox::testing {
namespace {

// Storage for one T, placed and destroyed by the test; its bytes are the test's to read.
template <class T>
class Placed {
 public:
  template <class... Args>
  T& Make(Args&&... args) {
    return *::new (static_cast<void*>(bytes_)) T(std::forward<Args>(args)...);
  }
  T& get() { return *std::launder(reinterpret_cast<T*>(bytes_)); }
  void Destroy() { get().~T(); }
  // Whether `needle` appears anywhere in the storage.
  bool Holds(std::string_view needle) const {
    const std::string_view all(reinterpret_cast<const char*>(bytes_), sizeof(bytes_));
    return all.find(needle) != std::string_view::npos;
  }

 private:
  alignas(T) unsigned char bytes_[sizeof(T)] = {};
};

constexpr std::string_view kPassword = "pw-3f9a1c7e";  // 11 bytes: inside the std::string
constexpr std::string_view kKey = "key-8d02b5a4";

MysqlOptions WithPassword(std::string_view password) {
  MysqlOptions options;
  options.password = std::string(password);
  return options;
}

// The premise: a plain MysqlOptions leaves a short password in its storage, destroyed or moved
// from. Without it the tests below could not fail.
TEST(SecretOwnerTest, APlainOptionsStructLeavesItsShortPasswordBehind) {
  Placed<MysqlOptions> destroyed;
  destroyed.Make(WithPassword(kPassword));
  destroyed.Destroy();
  EXPECT_TRUE(destroyed.Holds(kPassword));

  Placed<MysqlOptions> moved_from;
  MysqlOptions moved_to(std::move(moved_from.Make(WithPassword(kPassword))));
  EXPECT_TRUE(moved_from.Holds(kPassword.substr(1))) << "a moved-from string clears byte 0 only";
  moved_from.Destroy();
}

TEST(SecretOwnerTest, ADestroyedHolderLeavesNoByteOfItsSecret) {
  Placed<core::SecretOwner<MysqlOptions>> mysql;
  mysql.Make(WithPassword(kPassword));
  EXPECT_TRUE(mysql.Holds(kPassword));
  mysql.Destroy();
  EXPECT_FALSE(mysql.Holds(kPassword.substr(1)));

  Placed<core::SecretOwner<TencentImOptions>> im;
  im.Make().secret_key = std::string(kKey);
  im.Destroy();
  EXPECT_FALSE(im.Holds(kKey.substr(1)));

  Placed<core::SecretOwner<std::string>> text;
  text.Make(std::string(kKey));
  text.Destroy();
  EXPECT_FALSE(text.Holds(kKey.substr(1)));
}

TEST(SecretOwnerTest, AMovedFromOrAssignedOverHolderKeepsNoSecret) {
  Placed<core::SecretOwner<MysqlOptions>> from;
  from.Make(WithPassword(kPassword));
  core::SecretOwner<MysqlOptions> to(std::move(from.get()));
  EXPECT_EQ(to.password, kPassword);
  EXPECT_FALSE(from.Holds(kPassword.substr(1)));
  from.Destroy();

  // A shorter secret over a longer one: the old tail would stay behind the new one.
  Placed<core::SecretOwner<MysqlOptions>> over;
  over.Make(WithPassword("old-secret-12"));
  over.get() = WithPassword("new");
  EXPECT_EQ(over.get().password, "new");
  EXPECT_FALSE(over.Holds("secret-12"));
  over.get() = to;  // copy-assigned
  EXPECT_EQ(over.get().password, kPassword);
  over.Destroy();
  EXPECT_FALSE(over.Holds(kPassword.substr(1)));

  // A plain MysqlOptions moved into a holder is left without its secret too.
  Placed<MysqlOptions> source;
  core::SecretOwner<MysqlOptions> taken(std::move(source.Make(WithPassword(kPassword))));
  EXPECT_EQ(taken.password, kPassword);
  EXPECT_FALSE(source.Holds(kPassword.substr(1)));
  source.Destroy();
}

// The relay's Config (and so the SharedConfig the hook's loaders and the C ABI's options hold):
// its copies and the original wipe both secrets.
TEST(SecretOwnerTest, TheRelaysConfigAndItsCopiesWipeTheirSecrets) {
  Placed<relay::Config> original;
  Placed<relay::Config> copy;
  relay::Config& config = original.Make();
  config.mysql.password = std::string(kPassword);
  config.tencent_im.secret_key = std::string(kKey);
  copy.Make(config);
  EXPECT_TRUE(copy.Holds(kPassword));
  relay::Config moved(std::move(original.get()));
  EXPECT_FALSE(original.Holds(kPassword.substr(1)));
  EXPECT_FALSE(original.Holds(kKey.substr(1)));
  original.Destroy();
  copy.Destroy();
  EXPECT_FALSE(copy.Holds(kPassword.substr(1)));
  EXPECT_FALSE(copy.Holds(kKey.substr(1)));
  EXPECT_EQ(moved.tencent_im.secret_key, kKey);
}

class SecretReloadTest : public ConfigFixture {};

// A reload with a new IM key applied to the publisher: while the reloader runs and after it is
// gone, no heap block that held the old key, the new key or the password was freed unwiped
// (secrets longer than a std::string holds in itself, so each copy has a heap buffer).
TEST_F(SecretReloadTest, AReloadAndTheReloaderLeaveNoUnwipedCopyOnTheHeap) {
  const std::string password = "reload-password-0123456789abcdef";
  const std::string old_key = "reload-old-key-0123456789abcdef0123456789";
  const std::string new_key = "reload-new-key-fedcba9876543210fedcba9876";
  Write("pw", password + "\n");
  Write("key", old_key + "\n");
  const std::string path = Write("relay.toml",
                                 "[mysql]\npassword_file = \"pw\"\n"
                                 "[tencent_im]\nsecret_key_file = \"key\"\n");
  std::ostringstream out;
  auto logger = relay::MakeStreamLogger(out, relay::LogFormat::kText, spdlog::level::info);
  core::SecretOwner<std::string> publisher_key;  // what the publisher would hold
  auto running = relay::LoadConfig(path);
  ASSERT_TRUE(running) << running.error().message;
  Write("key", new_key + "\n");  // before the watch: the test's own copies are not the relay's
  {
    FreedSecretWatch watch({password, old_key, new_key});
    {
      relay::ConfigReloader reloader(
          std::move(*running), "", *logger,
          {[&](const std::string& key) { core::ReplaceSecret(publisher_key, key); }});
      ASSERT_TRUE(reloader.Reload());
      EXPECT_TRUE(reloader.current().tencent_im.secret_key == new_key);
      EXPECT_EQ(watch.hits(), 0) << "freed unwiped during the reload: " << watch.HitSizes();
    }
    EXPECT_TRUE(publisher_key == new_key);
    core::WipeString(publisher_key);
    EXPECT_EQ(watch.hits(), 0) << "freed unwiped: " << watch.HitSizes();
  }
  EXPECT_THAT(out.str(), ::testing::HasSubstr("im_secret_key=\"changed, applied\""));
}

}  // namespace
}  // namespace room_outbox::testing
