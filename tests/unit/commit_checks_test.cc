// The checks Commit makes before BEGIN: column lengths, UTF-8, and GroupIds Tencent accepts.
#include "commit_checks.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace room_outbox {
namespace {

Command AValidCommand() { return Command{"cmd-1", "room-1", "SendGift", "req-1", 1, "{}"}; }
std::vector<Event> OneGift() { return {Event{"ev-1", "RoomGiftSent", 1, 0, "{}"}}; }
const std::vector<std::string> kSkip = {"RoomCreated", "RoomHeatChanged", "RoomRankChanged"};

Status Check(const Command& command, const std::vector<Event>& events,
             const std::string& prefix = "live_") {
  return internal::CheckCommand(command, events, prefix, kSkip);
}

void ExpectRefused(const Status& status, const std::string& names) {
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(status.error().message.find(names), std::string::npos) << status.error().message;
}

TEST(CommitChecksTest, AValidCommandPasses) { EXPECT_TRUE(Check(AValidCommand(), OneGift()).ok()); }

TEST(CommitChecksTest, IdsAtTheirColumnLengthPassAndOneCharacterMoreIsRefused) {
  Command command = AValidCommand();
  command.command_id = std::string(internal::kMaxIdChars, 'c');
  EXPECT_TRUE(Check(command, OneGift(), "").ok());
  command.command_id += "c";
  ExpectRefused(Check(command, OneGift()), "command_id has 129 characters, over the column's 128");
}

TEST(CommitChecksTest, LengthsCountCharactersNotBytes) {
  Command command = AValidCommand();
  std::vector<Event> events = OneGift();
  events[0].event_id.clear();
  for (size_t i = 0; i < internal::kMaxIdChars; ++i)
    events[0].event_id += "\xe7\xa4\xbc";  // 礼, 3 bytes
  EXPECT_TRUE(Check(command, events).ok());
  events[0].event_id += "x";
  ExpectRefused(Check(command, events), "event_id has 129 characters");
}

TEST(CommitChecksTest, EveryColumnIsChecked) {
  Command command = AValidCommand();
  command.room_id = std::string(internal::kMaxIdChars + 1, 'r');
  ExpectRefused(Check(command, OneGift()), "room_id has 129 characters");
  command = AValidCommand();
  command.command_type = std::string(internal::kMaxTypeChars + 1, 't');
  ExpectRefused(Check(command, OneGift()), "command_type has 65 characters");
  command = AValidCommand();
  command.request_id = std::string(internal::kMaxIdChars + 1, 'q');
  ExpectRefused(Check(command, OneGift()), "request_id has 129 characters");
  std::vector<Event> events = OneGift();
  events[0].event_type = std::string(internal::kMaxTypeChars + 1, 'e');
  ExpectRefused(Check(AValidCommand(), events), "event ev-1: event_type has 65 characters");
}

TEST(CommitChecksTest, InvalidUtf8IsRefusedAndNamedPrintably) {
  std::vector<Event> events = OneGift();
  events[0].event_id = "ev-\xff\x01";
  ExpectRefused(Check(AValidCommand(), events), "event ev-\\xff\\x01: event_id is not valid UTF-8");
}

TEST(CommitChecksTest, EmptyRequiredFieldsAreRefused) {
  Command command = AValidCommand();
  command.command_id.clear();
  ExpectRefused(Check(command, OneGift()), "command_id is empty");
  command = AValidCommand();
  command.room_id.clear();
  ExpectRefused(Check(command, OneGift()), "room_id is empty");
  std::vector<Event> events = OneGift();
  events[0].event_id.clear();
  ExpectRefused(Check(AValidCommand(), events), "event 0 has an empty event_id");
  events = OneGift();
  events[0].event_type.clear();
  ExpectRefused(Check(AValidCommand(), events), "event_type is empty");
}

TEST(CommitChecksTest, GroupIdOver48BytesWithThePrefixIsRefused) {
  Command command = AValidCommand();
  command.room_id = std::string(48 - 5, 'r');  // "live_" + 43 = 48 bytes
  EXPECT_TRUE(Check(command, OneGift()).ok());
  command.room_id += "r";
  ExpectRefused(Check(command, OneGift()), "(group_id_prefix + room_id) is 49 bytes, over IM's 48");
}

TEST(CommitChecksTest, GroupIdOutsidePrintableAsciiIsRefused) {
  Command command = AValidCommand();
  command.room_id = "room-\xe7\xa4\xbc";
  ExpectRefused(Check(command, OneGift()), "has a byte outside printable ASCII");
  command.room_id = "room\t1";
  ExpectRefused(Check(command, OneGift()), "GroupId \"live_room\\x091\"");
}

TEST(CommitChecksTest, GroupIdReservedByImIsRefused) {
  Command command = AValidCommand();
  command.room_id = "@TGS#aXXXX";
  ExpectRefused(Check(command, OneGift(), ""), "starts with @TGS#, which IM reserves");
  EXPECT_TRUE(Check(command, OneGift(), "live_").ok());  // the prefix comes first
}

TEST(CommitChecksTest, GroupIdRuleIsTheSameWherePrefixAndRoomIdMeet) {
  const std::string group_ids[] = {"live_room-1", "@TGS#aXXXX", "@TGS#", "@TG", "",
                                   "room\t1",     std::string(48, 'r'), std::string(49, 'r'),
                                   "room-\xe7\xa4\xbc"};
  for (const std::string& group_id : group_ids) {
    for (size_t cut = 0; cut <= group_id.size(); ++cut) {
      EXPECT_EQ(internal::GroupIdProblem(group_id.substr(0, cut), group_id.substr(cut)),
                internal::GroupIdProblem(group_id))
          << group_id << " cut at " << cut;
    }
  }
  Command command = AValidCommand();
  command.room_id = "S#a";
  ExpectRefused(Check(command, OneGift(), "@TG"), "starts with @TGS#, which IM reserves");
}

TEST(CommitChecksTest, ARoomWhoseEventsAreNeverSentNeedsNoGroupId) {
  Command command = AValidCommand();
  command.room_id = "room-\xe7\xa4\xbc";
  EXPECT_TRUE(Check(command, {Event{"ev-1", "RoomHeatChanged", 1, 0, "{}"}}).ok());
}

}  // namespace
}  // namespace room_outbox
