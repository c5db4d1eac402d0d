// Replays every file of the checked-in fuzz corpus (tests/fuzz/corpus/<target>/) through its fuzz
// target, so the seeds and every input a fuzzer once crashed on stay tests of the normal suite.
// A target aborts on a violated invariant; the file being replayed is printed before each call.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_targets.h"

namespace room_outbox::fuzz {

// Test names and failure messages show the target's name, not its bytes.
void PrintTo(const NamedTarget& target, std::ostream* os) { *os << target.name; }

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> CorpusFiles(std::string_view target) {
  std::vector<fs::path> files;
  const fs::path dir = fs::path(ROOM_OUTBOX_FUZZ_CORPUS_DIR) / target;
  if (!fs::is_directory(dir)) return files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

class FuzzCorpusTest : public ::testing::TestWithParam<NamedTarget> {};

TEST_P(FuzzCorpusTest, EveryCorpusFileReplaysWithoutAFinding) {
  const NamedTarget& t = GetParam();
  const auto files = CorpusFiles(t.name);
  ASSERT_FALSE(files.empty()) << "no seed corpus under " << ROOM_OUTBOX_FUZZ_CORPUS_DIR << "/"
                              << t.name;
  for (const fs::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    ASSERT_TRUE(in) << file;
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::cerr << "replaying " << file.string() << " (" << bytes.size() << " bytes)\n";
    EXPECT_EQ(t.target(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), 0) << file;
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzCorpusTest, ::testing::ValuesIn(kTargets),
                         [](const ::testing::TestParamInfo<NamedTarget>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace room_outbox::fuzz
