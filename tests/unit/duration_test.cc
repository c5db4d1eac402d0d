#include "core/config/duration.h"

#include <gtest/gtest.h>

namespace room_outbox::relay {
namespace {

using std::chrono::milliseconds;

TEST(DurationTest, ParsesEveryUnit) {
  struct Case {
    const char* text;
    int64_t ms;
  };
  for (const Case& c : {Case{"500ms", 500}, Case{"1s", 1000}, Case{"3s", 3000},
                        Case{"2m", 120000}, Case{"24h", 86400000}, Case{"0", 0}, Case{"0s", 0},
                        Case{"-1s", -1000}, Case{"1500ms", 1500}}) {
    auto d = core::ParseDuration(c.text);
    ASSERT_TRUE(d) << c.text << ": " << d.error().message;
    EXPECT_EQ(d->count(), c.ms) << c.text;
  }
}

TEST(DurationTest, RejectsMalformedText) {
  for (const char* text : {"", "3 s", " 3s", "3s ", "abc", "1y", "1.5s", "s", "-", "3", "3S",
                           "1d", "99999999999999999999h", "3sec"}) {
    auto d = core::ParseDuration(text);
    ASSERT_FALSE(d) << "accepted \"" << text << "\"";
    EXPECT_EQ(d.error().code, ErrorCode::kInvalidArgument) << text;
    EXPECT_NE(d.error().message.find(std::string("\"") + text + "\""), std::string::npos)
        << d.error().message;
  }
}

// A duration that fits in milliseconds but not in a clock's nanoseconds would overflow the
// first time point it is added to: refused, with the maximum named.
TEST(DurationTest, RefusesWhatAClockCannotAdd) {
  EXPECT_EQ(core::kMaxDuration, std::chrono::hours(2562047));
  EXPECT_TRUE(core::ParseDuration("2562047h"));
  for (const char* text : {"2562048h", "9223372036854775807ms", "-9223372036854775807ms",
                           "9223372036854775s", "153722867280912m"}) {
    auto d = core::ParseDuration(text);
    ASSERT_FALSE(d) << "accepted \"" << text << "\"";
    EXPECT_NE(d.error().message.find("out of range (at most 2562047h)"), std::string::npos)
        << d.error().message;
  }
}

TEST(DurationTest, FormatsTheLargestExactUnit) {
  EXPECT_EQ(core::FormatDuration(milliseconds(500)), "500ms");
  EXPECT_EQ(core::FormatDuration(milliseconds(1500)), "1500ms");
  EXPECT_EQ(core::FormatDuration(milliseconds(3000)), "3s");
  EXPECT_EQ(core::FormatDuration(milliseconds(90000)), "90s");
  EXPECT_EQ(core::FormatDuration(milliseconds(120000)), "2m");
  EXPECT_EQ(core::FormatDuration(milliseconds(86400000)), "24h");
  EXPECT_EQ(core::FormatDuration(milliseconds(0)), "0s");
}

TEST(DurationTest, FormatParsesBack) {
  for (int64_t ms : {1, 999, 1000, 61000, 3600000, 7200001}) {
    auto back = core::ParseDuration(core::FormatDuration(milliseconds(ms)));
    ASSERT_TRUE(back) << ms;
    EXPECT_EQ(back->count(), ms);
  }
}

}  // namespace
}  // namespace room_outbox::relay
