// The attempt history's entry format (store/attempt_history.h): what the worker's notes say for
// each kind of outcome, and that `show` reads back exactly what the marks write.
#include "store/attempt_history.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace room_outbox::relay {
namespace {

using std::chrono::milliseconds;

core::PublishOutcome Outcome(core::PublishStatus status, int http, int im, int64_t latency_ms) {
  core::PublishOutcome o;
  o.status = status;
  o.http_status = http;
  o.im_error_code = im;
  o.latency = milliseconds(latency_ms);
  return o;
}

// An entry as the marks store it: the server's time, a tab, the note's text, a newline.
std::string Stored(int64_t at_ms, const AttemptNote& note) {
  return std::to_string(at_ms) + "\t" + note.text + "\n";
}

TEST(AttemptEntryFormatTest, ANoteNamesTheRelayThePackTheOutcomeTheCodeAndTheLatency) {
  const AttemptNote ok =
      NoteOfSend("relay-a", 3, Outcome(core::PublishStatus::kPublished, 200, 0, 41));
  EXPECT_EQ(ok.text, "relay-a\t3\tpublished\thttp 200\t41");
  // IM's ErrorCode wins over the HTTP status it came with.
  EXPECT_EQ(
      NoteOfSend("relay-a", 1, Outcome(core::PublishStatus::kRateLimited, 200, 60007, 5)).text,
      "relay-a\t1\trate_limited\tim 60007\t5");
  // No answer at all (a timeout): no code.
  EXPECT_EQ(NoteOfSend("relay-a", 1, Outcome(core::PublishStatus::kUnknown, 0, 0, 3000)).text,
            "relay-a\t1\tunknown\t-\t3000");
  EXPECT_EQ(NoteOfSettlement("relay-a", "expired").text, "relay-a\t0\texpired\t-\t0");
}

TEST(AttemptEntryFormatTest, ANodeIdCannotBreakTheEntry) {
  const AttemptNote note =
      NoteOfSend("bad\tnode\nid", 1, Outcome(core::PublishStatus::kPermanent, 200, 10010, 7));
  auto entries = ParseAttempts(Stored(1000, note));
  ASSERT_TRUE(entries) << entries.error().message;
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].node_id, "bad node id");
  EXPECT_EQ((*entries)[0].detail, "im 10010");
}

TEST(AttemptEntryFormatTest, WhatTheMarksWriteIsReadBackInOrder) {
  const std::string text =
      Stored(1000, NoteOfSend("r1", 2, Outcome(core::PublishStatus::kRetryable, 503, 0, 12))) +
      Stored(1500, NoteOfSend("r2", 2, Outcome(core::PublishStatus::kPublished, 200, 0, 9)));
  auto entries = ParseAttempts(text);
  ASSERT_TRUE(entries) << entries.error().message;
  ASSERT_EQ(entries->size(), 2u);
  const AttemptEntry& first = (*entries)[0];
  EXPECT_EQ(first.at_ms, 1000);
  EXPECT_EQ(first.node_id, "r1");
  EXPECT_EQ(first.pack_events, 2);
  EXPECT_EQ(first.outcome, "retryable");
  EXPECT_EQ(first.detail, "http 503");
  EXPECT_EQ(first.latency_ms, 12);
  EXPECT_EQ((*entries)[1].at_ms, 1500);
  EXPECT_EQ((*entries)[1].outcome, "published");
  auto none = ParseAttempts("");
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

TEST(AttemptEntryFormatTest, ALineThatIsNotAnEntryIsAnErrorNamingIt) {
  auto bad = ParseAttempts("1000\tr1\t1\tpublished\thttp 200\t9\nnot an entry\n");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kInternal);
  EXPECT_THAT(bad.error().message, ::testing::HasSubstr("\"not an entry\""));
  EXPECT_FALSE(ParseAttempts("x\tr1\t1\tpublished\thttp 200\t9\n"));
}

TEST(AttemptEntryFormatTest, EveryStatusHasAnOutcomeName) {
  for (core::PublishStatus status :
       {core::PublishStatus::kPublished, core::PublishStatus::kSkipped,
        core::PublishStatus::kRetryable, core::PublishStatus::kRateLimited,
        core::PublishStatus::kUnknown, core::PublishStatus::kPermanent,
        core::PublishStatus::kNotAttempted}) {
    EXPECT_THAT(kAttemptOutcomes,
                ::testing::Contains(std::string_view(core::PublishStatusName(status))));
  }
}

TEST(AttemptEntryFormatTest, TheWaitOfANoteCountsFromWhenItsOutcomeWasKnown) {
  AttemptNote note;
  note.known_at = std::chrono::steady_clock::now() - milliseconds(250);
  EXPECT_GE(note.WaitedMs(), 250);
  note.known_at = std::chrono::steady_clock::now() + milliseconds(1000);
  EXPECT_EQ(note.WaitedMs(), 0);
}

}  // namespace
}  // namespace room_outbox::relay
