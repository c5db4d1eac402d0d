// docs/development.md's layout table tells the truth: every path it names exists, and every
// folder of the source tree that holds sources (code, build files, scripts, SQL, config) is
// named there, as are the top-level folders.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace room_outbox {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = ROOM_OUTBOX_SOURCE_DIR;

// The first column of each row of the layout table (headed "| path | what |" in "## Layout"):
// `path` or `folder/`.
std::set<std::string> LayoutPaths() {
  std::ifstream in(kSource / "docs" / "development.md");
  std::string line;
  bool in_layout = false;
  bool in_table = false;
  std::set<std::string> paths;
  static const std::regex kRow(R"(^\| `([^`]+)` \|)");
  while (std::getline(in, line)) {
    if (line.starts_with("## ")) in_layout = line == "## Layout";
    if (in_layout && line == "| path | what |") in_table = true;
    if (in_table && !line.starts_with("|")) break;
    std::smatch row;
    if (in_table && std::regex_search(line, row, kRow)) paths.insert(row[1].str());
  }
  return paths;
}

bool IsSourceFile(const fs::path& file) {
  static const std::set<std::string> kExtensions = {".cc", ".h",    ".c",   ".go",  ".sh",
                                                    ".cmake", ".js", ".sql", ".toml", ".in"};
  return kExtensions.contains(file.extension().string()) || file.filename() == "CMakeLists.txt";
}

// Build trees (build*, dh's obj-* and debian/<package>/ staging), dependencies installed by
// `make deps` (node_modules), hidden folders and fuzz corpora hold no sources of the project.
bool Skipped(const fs::path& relative) {
  const std::string name = relative.filename().string();
  if (name.starts_with(".") || name.starts_with("build") || name.starts_with("obj-") ||
      name == "node_modules" || name == "corpus") {
    return true;
  }
  return relative.has_parent_path() && relative.parent_path() == "debian";
}

// Each folder (relative, "a/b/") that directly holds a source file, and each top-level folder.
std::set<std::string> SourceFolders() {
  std::set<std::string> folders;
  for (auto it = fs::recursive_directory_iterator(kSource); it != fs::recursive_directory_iterator();
       ++it) {
    const fs::path relative = fs::relative(it->path(), kSource);
    if (it->is_directory()) {
      if (Skipped(relative)) {
        it.disable_recursion_pending();
      } else if (!relative.has_parent_path()) {
        folders.insert(relative.string() + "/");
      }
    } else if (IsSourceFile(relative) && relative.has_parent_path()) {
      folders.insert(relative.parent_path().string() + "/");
    }
  }
  return folders;
}

TEST(DocsLayoutTest, EveryPathTheLayoutNamesExists) {
  const std::set<std::string> named = LayoutPaths();
  ASSERT_GE(named.size(), 20u) << "docs/development.md: the ## Layout table was not found";
  for (const std::string& path : named) {
    EXPECT_TRUE(fs::exists(kSource / path)) << "docs/development.md names " << path;
  }
}

TEST(DocsLayoutTest, EverySourceFolderIsNamedInTheLayout) {
  const std::set<std::string> named = LayoutPaths();
  const std::set<std::string> folders = SourceFolders();
  ASSERT_TRUE(folders.contains("core/mysql/")) << "the walk did not see the source tree";
  for (const std::string& folder : folders) {
    EXPECT_TRUE(named.contains(folder)) << folder << " is missing from docs/development.md";
  }
}

}  // namespace
}  // namespace room_outbox
