// SplitIntoPacks (hook/src/sync_packs.h): how the hook's sync publish groups a command's events.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/tencent/im_request.h"
#include "sync_packs.h"

namespace room_outbox::internal {
namespace {

std::vector<PackCandidate> Candidates(const std::vector<std::string>& ids,
                                      const std::vector<std::string>& texts) {
  std::vector<PackCandidate> out;
  for (size_t i = 0; i < ids.size(); ++i) out.push_back(PackCandidate{ids[i], texts[i]});
  return out;
}

TEST(SplitIntoPacksTest, OneEventPerMessageWhenPackMaxEventsIsOneOrZero) {
  const std::vector<std::string> ids = {"a", "b", "c"};
  const std::vector<std::string> texts = {"{}", "{}", "{}"};
  const auto events = Candidates(ids, texts);
  for (size_t max : {0u, 1u}) {
    EXPECT_EQ(SplitIntoPacks(events, "r", PackLimits{max, 12288, "g_"}),
              (std::vector<size_t>{1, 1, 1}));
  }
}

TEST(SplitIntoPacksTest, AtMostPackMaxEventsPerMessageInOrder) {
  const std::vector<std::string> ids = {"a", "b", "c", "d", "e"};
  const std::vector<std::string> texts(5, "{\"x\":1}");
  EXPECT_EQ(SplitIntoPacks(Candidates(ids, texts), "r", PackLimits{3, 12288, "g_"}),
            (std::vector<size_t>{3, 2}));
  EXPECT_EQ(SplitIntoPacks({}, "r", PackLimits{3, 12288, "g_"}), std::vector<size_t>{});
}

TEST(SplitIntoPacksTest, APackEndsBeforeTheEventThatWouldTakeItsBodyPastMaxBodyBytes) {
  const std::vector<std::string> ids = {"a", "b", "c", "d"};
  const std::vector<std::string> texts(4, std::string("{\"p\":\"") + std::string(100, 'x') + "\"}");
  // The limit is exactly the body of two events: two per pack; one byte less: one.
  core::PackBodySize one("g_", "r", "a");
  one.Add(texts[0]);
  const size_t two = one.With(texts[1]);
  EXPECT_EQ(SplitIntoPacks(Candidates(ids, texts), "r", PackLimits{10, two, "g_"}),
            (std::vector<size_t>{2, 2}));
  EXPECT_EQ(SplitIntoPacks(Candidates(ids, texts), "r", PackLimits{10, two - 1, "g_"}),
            (std::vector<size_t>{1, 1, 1, 1}));
  // A single event too big for any pack still goes out alone.
  EXPECT_EQ(SplitIntoPacks(Candidates(ids, texts), "r", PackLimits{10, 1, "g_"}),
            (std::vector<size_t>{1, 1, 1, 1}));
}

}  // namespace
}  // namespace room_outbox::internal
