// WakeSocket on real unix datagram sockets in a private temporary directory: bind, the stale
// file of a killed relay replaced, a live socket and non-socket files refused, paths
// WakeSender::Check refuses, datagrams received and drained, the file removed at the end. The
// listener's thread: tests/integration/wake_listener_test.cc.
#include "daemon/wake_socket.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "config/config.h"
#include "support/wake_socket_fixture.h"
#include "core/fd.h"
#include "wake_sender.h"

namespace room_outbox::relay {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A socket file as a killed relay leaves it: bound, then its process (here: its fd) gone.
void LeaveStaleSocket(const std::string& path) {
  const core::Fd fd(::socket(AF_UNIX, SOCK_DGRAM, 0));
  ASSERT_TRUE(fd);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  ASSERT_EQ(::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)), 0)
      << std::strerror(errno);
  // The socket closes here; the file stays.
}

class WakeSocketTest : public ::room_outbox::testing::WakeSocketFixture {};

TEST_F(WakeSocketTest, BindsASocketOnlyItsUserAndGroupMaySendToAndRemovesItAtTheEnd) {
  auto socket = MustBind(path_);
  ASSERT_NE(socket, nullptr);
  struct stat st {};
  ASSERT_EQ(::lstat(path_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0660u);  // the default mode: no other user may wake the relay
  EXPECT_EQ(socket->path(), path_);
  socket.reset();
  EXPECT_FALSE(fs::exists(fs::symlink_status(path_)));
}

TEST_F(WakeSocketTest, AGroupRestrictedModeIsGivenWhateverTheUmask) {
  const mode_t old_umask = ::umask(0);  // a umask would not widen 0660 either way
  auto bound = WakeSocket::Bind(path_, 0660);
  ::umask(old_umask);
  ASSERT_TRUE(bound) << bound.error().message;
  struct stat st {};
  ASSERT_EQ(::lstat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
}

TEST_F(WakeSocketTest, DatagramsAreReceivedAndDrainedSoTheQueueDoesNotStayFull) {
  auto socket = MustBind(path_);
  ASSERT_NE(socket, nullptr);
  EXPECT_EQ(socket->Drain(), 0u);  // nothing queued: returns at once
  internal::WakeSender sender(path_);
  // Linux queues 10 datagrams per unix datagram socket by default (net.unix.max_dgram_qlen):
  // send until the kernel refuses, then everything queued is drained and sending works again.
  while (sender.refused() == 0 && sender.sent() < 10000) sender.Notify();
  ASSERT_GT(sender.sent(), 0u);
  EXPECT_EQ(sender.refused(), 1u);
  EXPECT_EQ(socket->Drain(), sender.sent());
  EXPECT_EQ(socket->Drain(), 0u);
  const uint64_t before = sender.sent();
  sender.Notify();
  sender.Notify();
  EXPECT_EQ(sender.sent(), before + 2);
  EXPECT_EQ(socket->Drain(), 2u);
}

TEST_F(WakeSocketTest, DrainReadsAtMostItsLimitAndLeavesTheRestQueued) {
  auto socket = MustBind(path_);
  ASSERT_NE(socket, nullptr);
  internal::WakeSender sender(path_);
  for (int i = 0; i < 5; ++i) sender.Notify();
  ASSERT_EQ(sender.sent(), 5u);
  EXPECT_EQ(socket->Drain(3), 3u);
  EXPECT_EQ(socket->Drain(), 2u);
}

TEST_F(WakeSocketTest, AStaleSocketFileOfADeadRelayIsReplaced) {
  LeaveStaleSocket(path_);
  ASSERT_TRUE(fs::is_socket(path_));
  auto socket = MustBind(path_);
  ASSERT_NE(socket, nullptr);
  internal::WakeSender sender(path_);
  sender.Notify();
  EXPECT_EQ(sender.sent(), 1u);
  EXPECT_EQ(socket->Drain(), 1u);
}

TEST_F(WakeSocketTest, ASocketARunningProcessIsBoundToIsRefusedAndKept) {
  auto first = MustBind(path_);
  ASSERT_NE(first, nullptr);
  auto second = WakeSocket::Bind(path_, kDefaultWakeSocketMode);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().code, ErrorCode::kAlreadyExists);
  EXPECT_THAT(second.error().message, HasSubstr(path_));
  EXPECT_THAT(second.error().message, HasSubstr("bound by a running process"));
  // The first relay still gets its wake-ups.
  internal::WakeSender sender(path_);
  sender.Notify();
  EXPECT_EQ(first->Drain(), 1u);
}

TEST_F(WakeSocketTest, AFileThatIsNotASocketIsRefusedAndNeverRemoved) {
  std::ofstream(path_) << "operator's notes\n";
  auto regular = WakeSocket::Bind(path_, kDefaultWakeSocketMode);
  ASSERT_FALSE(regular);
  EXPECT_EQ(regular.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(regular.error().message, HasSubstr(path_));
  EXPECT_THAT(regular.error().message, HasSubstr("a regular file, not a socket"));
  EXPECT_TRUE(fs::is_regular_file(path_));

  const std::string dir = (dir_ / "a-directory").string();
  fs::create_directory(dir);
  auto directory = WakeSocket::Bind(dir, kDefaultWakeSocketMode);
  ASSERT_FALSE(directory);
  EXPECT_THAT(directory.error().message, HasSubstr("a directory, not a socket"));

  const std::string link = (dir_ / "a-link").string();
  fs::create_symlink(path_, link);
  auto symlink = WakeSocket::Bind(link, kDefaultWakeSocketMode);
  ASSERT_FALSE(symlink);
  EXPECT_THAT(symlink.error().message, HasSubstr("a symbolic link, not a socket"));
  EXPECT_TRUE(fs::is_symlink(link));
}

TEST_F(WakeSocketTest, PathsTheSenderCannotUseAreRefused) {
  auto relative = WakeSocket::Bind("run/wake.sock", kDefaultWakeSocketMode);
  ASSERT_FALSE(relative);
  EXPECT_THAT(relative.error().message, HasSubstr("must be absolute"));
  const std::string too_long = "/tmp/" + std::string(sizeof(sockaddr_un{}.sun_path), 'x');
  auto long_path = WakeSocket::Bind(too_long, kDefaultWakeSocketMode);
  ASSERT_FALSE(long_path);
  EXPECT_THAT(long_path.error().message, HasSubstr("at most"));
  auto empty = WakeSocket::Bind("", kDefaultWakeSocketMode);
  ASSERT_FALSE(empty);
  EXPECT_THAT(empty.error().message, HasSubstr("empty"));
}

TEST_F(WakeSocketTest, ABindFailureNamesThePathAndTheSystemError) {
  const std::string missing_dir = (dir_ / "no-such-dir" / "wake.sock").string();
  auto bound = WakeSocket::Bind(missing_dir, kDefaultWakeSocketMode);
  ASSERT_FALSE(bound);
  EXPECT_THAT(bound.error().message, HasSubstr("bind(" + missing_dir + ")"));
  EXPECT_THAT(bound.error().message, HasSubstr(std::strerror(ENOENT)));
}

TEST_F(WakeSocketTest, AFileReplacedBySomeoneElseIsNotRemovedAtTheEnd) {
  auto socket = MustBind(path_);
  ASSERT_NE(socket, nullptr);
  ASSERT_TRUE(fs::remove(path_));
  std::ofstream(path_) << "not ours\n";
  socket.reset();
  EXPECT_TRUE(fs::is_regular_file(path_));
}

}  // namespace
}  // namespace room_outbox::relay
