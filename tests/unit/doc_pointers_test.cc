// Every pointer in the shipped text resolves: in conf/, docs/, README.md and debian/*README*,
// each markdown link target, each relative file path named in the text (a token with a '/' and a
// source or doc extension), each anchor (`file.md#section`, `[..](#section)`) and each section
// named by its title (`relay.md, "The wake socket"`, `README "..."`) must name a file of the tree
// and a heading of that file. A failure names the file, the line and the broken pointer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace room_outbox::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot(ROOM_OUTBOX_SOURCE_DIR);

// GitHub's anchor of a heading: lower case; letters, digits, '-', '_' and spaces kept (spaces
// become '-'); everything else (backticks, dots, quotes, parentheses, ...) dropped.
std::string Slug(const std::string& heading) {
  std::string slug;
  for (char c : heading) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_') {
      slug += static_cast<char>(std::tolower(u));
    } else if (c == ' ') {
      slug += '-';
    }
  }
  return slug;
}

std::vector<std::string> Lines(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The headings of a markdown file outside fenced code: their titles (backticks dropped) and
// their anchors.
struct Headings {
  std::set<std::string> titles;
  std::set<std::string> anchors;
};

Headings ReadHeadings(const fs::path& file) {
  Headings h;
  bool fenced = false;
  static const std::regex kHeading(R"(^#{1,6}\s+(.*?)\s*$)");
  for (const std::string& line : Lines(file)) {
    if (line.rfind("```", 0) == 0) fenced = !fenced;
    std::smatch m;
    if (fenced || !std::regex_match(line, m, kHeading)) continue;
    std::string title = m[1];
    std::erase(title, '`');
    h.titles.insert(title);
    h.anchors.insert(Slug(m[1]));
  }
  return h;
}

// ReadHeadings, each file read once.
const Headings& HeadingsOf(const fs::path& file) {
  static std::map<fs::path, Headings> cache;
  auto it = cache.find(file);
  if (it == cache.end()) it = cache.emplace(file, ReadHeadings(file)).first;
  return it->second;
}

// The pointers of one file that do not resolve, each "file:line: what".
class PointerCheck {
 public:
  explicit PointerCheck(fs::path file) : file_(std::move(file)) {}

  void Line(int number, const std::string& line) {
    where_ = fs::relative(file_, kRoot).string() + ":" + std::to_string(number) + ": ";
    static const std::regex kLink(R"(\]\(([^)\s]+)\))");
    static const std::regex kPath(
        R"((?:^|[\s`'"(\[,=])((?:\.\./|[A-Za-z0-9][A-Za-z0-9_.-]*/)+[A-Za-z0-9_.-]+\.)"
        R"((?:cmake|cc|c|h|md|toml|sql|sh|yml|adoc|service|timer|go|json|supp)(?![A-Za-z0-9_/]|\.[A-Za-z0-9])))"
        R"((#[A-Za-z0-9_-]+)?)");
    static const std::regex kTitled(R"(\b(README|[A-Za-z0-9_./-]+\.md),? "([^"]+)\")");
    const bool markdown = file_.extension() == ".md";
    for (std::sregex_iterator it(line.begin(), line.end(), markdown ? kLink : kNever), end;
         it != end; ++it) {
      Target((*it)[1]);
    }
    for (std::sregex_iterator it(line.begin(), line.end(), kPath), end; it != end; ++it) {
      const std::string path = (*it)[1];
      if (!Installed(path)) Target(path + std::string((*it)[2]));
    }
    for (std::sregex_iterator it(line.begin(), line.end(), kTitled), end; it != end; ++it) {
      std::string doc = (*it)[1];
      if (doc == "README") doc = "README.md";
      Titled(doc, (*it)[2]);
    }
  }

  const std::vector<std::string>& broken() const { return broken_; }

 private:
  // A path of an installed system (share/room-outbox/..., usr/lib/..., a package's examples/),
  // of a build tree, or under a variable (BUILD_DIR/...).
  static bool Installed(const std::string& path) {
    for (const char* prefix : {"share/", "usr/", "etc/", "lib/", "run/", "var/", "build/",
                               "tmp/", "home/", "examples/"}) {
      if (path.rfind(prefix, 0) == 0) return true;
    }
    const std::string first = path.substr(0, path.find('/'));
    return std::none_of(first.begin(), first.end(), [](char c) { return std::islower(c); });
  }

  // A file of the tree, relative to the naming file's folder, the repository's root or the
  // public include root (room_outbox/c.h).
  std::optional<fs::path> Resolve(const std::string& path) const {
    for (const fs::path& base : {file_.parent_path(), kRoot, kRoot / "hook/include"}) {
      if (fs::exists(base / path)) return fs::weakly_canonical(base / path);
    }
    return std::nullopt;
  }

  void Target(const std::string& target) {
    if (target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0) return;
    const size_t hash = target.find('#');
    const std::string path = target.substr(0, hash);
    const std::string anchor = hash == std::string::npos ? "" : target.substr(hash + 1);
    const auto file = path.empty() ? std::optional<fs::path>(file_) : Resolve(path);
    if (!file) {
      broken_.push_back(where_ + "no file " + path);
    } else if (!anchor.empty() && file->extension() == ".md" &&
               !HeadingsOf(*file).anchors.contains(anchor)) {
      broken_.push_back(where_ + "no section #" + anchor + " in " + path);
    }
  }

  // A section named by its title, or by the start of it ("Reload" for "Reload (SIGHUP)").
  void Titled(const std::string& doc, std::string title) {
    std::erase(title, '`');
    const auto file = Resolve(doc).has_value() ? Resolve(doc) : Resolve("docs/" + doc);
    if (!file) {
      broken_.push_back(where_ + "no file " + doc);
    } else if (std::none_of(HeadingsOf(*file).titles.begin(), HeadingsOf(*file).titles.end(),
                            [&](const std::string& t) { return t.rfind(title, 0) == 0; })) {
      broken_.push_back(where_ + "no section \"" + title + "\" in " + doc);
    }
  }

  static inline const std::regex kNever{"$^"};
  fs::path file_;
  std::string where_;
  std::vector<std::string> broken_;
};

// The shipped text: conf/, docs/, README.md, debian/*README*.
std::vector<fs::path> ShippedText() {
  std::vector<fs::path> files = {kRoot / "README.md"};
  for (const char* dir : {"conf", "docs"}) {
    for (const auto& entry : fs::directory_iterator(kRoot / dir)) {
      if (entry.is_regular_file()) files.push_back(entry.path());
    }
  }
  for (const auto& entry : fs::directory_iterator(kRoot / "debian")) {
    if (entry.path().filename().string().find("README") != std::string::npos) {
      files.push_back(entry.path());
    }
  }
  return files;
}

TEST(DocPointersTest, SlugsFollowGitHub) {
  EXPECT_EQ(Slug("The example files in `conf/`"), "the-example-files-in-conf");
  EXPECT_EQ(Slug("`--once`"), "--once");
  EXPECT_EQ(Slug("Stale live events (`max_age_by_type`)"), "stale-live-events-max_age_by_type");
}

TEST(DocPointersTest, EveryPathAndAnchorInTheShippedTextResolves) {
  std::vector<std::string> broken;
  const std::vector<fs::path> files = ShippedText();
  ASSERT_GT(files.size(), 10u);
  for (const fs::path& file : files) {
    PointerCheck check(file);
    int number = 0;
    for (const std::string& line : Lines(file)) check.Line(++number, line);
    broken.insert(broken.end(), check.broken().begin(), check.broken().end());
  }
  std::ostringstream list;
  for (const std::string& b : broken) list << "  " << b << "\n";
  EXPECT_TRUE(broken.empty()) << broken.size() << " broken pointers:\n" << list.str();
}

}  // namespace
}  // namespace room_outbox::testing
