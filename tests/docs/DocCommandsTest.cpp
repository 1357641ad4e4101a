// Executed documentation: every shell block of README.md and docs/*.md runs, in order, in a scratch
// directory of its own document, and must succeed and print what the text shows. A doc that drifts
// from the code fails here. The conventions (README.md, "Documentation that runs"):
//   ```sh                         commands, run with bash -e in the document's scratch directory; the
//                                 blocks of a document are one session (exports and `cd` carry over)
//   <!-- not run: REASON -->      on the line before a ```sh fence: not run, and the reason says why
//   <!-- file: NAME -->           on the line before any fence: the block is written to NAME first
//   <!-- output -->               on the line before a fence: what the previous ```sh block prints; every
//                                 non-blank line must be a line of its output, in order, `...` matching any text
// The scratch directory links build/, examples/, scripts/ and tests/ to this tree; build/bin is on PATH.
#include "Process.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace dispar::testing {
namespace {

const std::string kSourceDir = DISPAR_SOURCE_DIR;
const std::string kBinaryDir = DISPAR_BINARY_DIR;

struct Block {
  int line = 0;          // of the opening fence, 1-based
  std::string language;  // after the fence: "sh", "cpp", "" ...
  std::string marker;    // the HTML comment on the line before the fence, if any
  std::string text;
};

std::vector<Block> blocksOf(const std::string& markdown) {
  std::vector<Block> blocks;
  std::istringstream lines(markdown);
  std::string line, previous;
  int number = 0;
  Block* open = nullptr;
  while (std::getline(lines, line)) {
    ++number;
    if (open == nullptr && line.rfind("```", 0) == 0) {
      blocks.push_back(Block{number, line.substr(3), previous.rfind("<!--", 0) == 0 ? previous : "", ""});
      open = &blocks.back();
    } else if (open != nullptr && line == "```") {
      open = nullptr;
    } else if (open != nullptr) {
      open->text += line + "\n";
    }
    previous = line;
  }
  return blocks;
}

/// The value of `<!-- KEY: VALUE -->`, or nullopt when the marker is another.
std::optional<std::string> markerValue(const std::string& marker, const std::string& key) {
  const std::string prefix = "<!-- " + key;
  if (marker.rfind(prefix, 0) != 0) return std::nullopt;
  std::string rest = marker.substr(prefix.size());
  const std::size_t end = rest.rfind("-->");
  rest = rest.substr(0, end);
  if (!rest.empty() && rest[0] == ':') rest = rest.substr(1);
  while (!rest.empty() && rest.front() == ' ') rest.erase(0, 1);
  while (!rest.empty() && rest.back() == ' ') rest.pop_back();
  return rest;
}

/// A shown output line as a regex: literal text, with `...` matching anything.
std::regex shownLine(const std::string& line) {
  std::string pattern;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line.compare(i, 3, "...") == 0) {
      pattern += ".*";
      i += 2;
    } else if (std::string("\\^$.|?*+()[]{}").find(line[i]) != std::string::npos) {
      pattern += std::string("\\") + line[i];
    } else {
      pattern += line[i];
    }
  }
  return std::regex(pattern);
}

/// Empty when every non-blank line of `shown` matches a line of `output`, in order; else what did not.
std::string missingOutput(const std::string& shown, const std::string& output) {
  std::vector<std::string> lines;
  std::istringstream in(output);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::size_t next = 0;
  std::istringstream expected(shown);
  for (std::string want; std::getline(expected, want);) {
    if (want.find_first_not_of(' ') == std::string::npos) continue;
    const std::regex pattern = shownLine(want);
    while (next < lines.size() && !std::regex_match(lines[next], pattern)) ++next;
    if (next == lines.size()) return want;
    ++next;
  }
  return "";
}

std::vector<std::string> documents() {
  std::vector<std::string> docs = {"README.md"};
  for (const auto& entry : std::filesystem::directory_iterator(kSourceDir + "/docs"))
    if (entry.path().extension() == ".md") docs.push_back("docs/" + entry.path().filename().string());
  std::sort(docs.begin() + 1, docs.end());
  return docs;
}

class DocCommands : public ::testing::TestWithParam<std::string> {};

TEST_P(DocCommands, EveryShellBlockRunsAndPrintsWhatTheTextShows) {
  const std::string doc = GetParam();
  const std::vector<Block> blocks = blocksOf(readFile(kSourceDir + "/" + doc));
  ScratchDir dir;
  for (const char* link : {"examples", "scripts", "tests"})
    std::filesystem::create_symlink(kSourceDir + "/" + link, dir.file(link));
  std::filesystem::create_symlink(kBinaryDir, dir.file("build"));
  const std::vector<std::string> env = {
      "PATH=" + kBinaryDir + "/bin:" + std::string(std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin"),
      "DISPAR_RESOURCE_DB=" + dir.file("resources.db"),
      // Every host a doc maps onto is this machine: MPICH starts the ranks without ssh.
      "HYDRA_LAUNCHER=fork", "NO_COLOR=1"};
  int ran = 0;
  const Block* lastRun = nullptr;
  std::string lastOutput;
  for (const Block& b : blocks) {
    const std::string where = doc + ":" + std::to_string(b.line);
    if (std::optional<std::string> name = markerValue(b.marker, "file")) {
      ASSERT_FALSE(name->empty()) << where << ": <!-- file: NAME --> names no file";
      dir.write(*name, b.text);
    }
    if (markerValue(b.marker, "output")) {
      ASSERT_NE(lastRun, nullptr) << where << ": an output block with no ```sh block run before it";
      EXPECT_EQ(missingOutput(b.text, lastOutput), "")
          << where << ": this line the text shows is not in the output of the block at line " << lastRun->line << ":\n"
          << lastOutput;
      continue;
    }
    if (b.language != "sh") continue;
    if (std::optional<std::string> reason = markerValue(b.marker, "not run")) {
      EXPECT_FALSE(reason->empty()) << where << ": <!-- not run: REASON --> gives no reason";
      lastRun = nullptr;
      continue;
    }
    // A document's blocks are one session: what a block exports and the directory it ends in carry over
    // to the next (`export DISPAR_RESOURCE_DB=...`, `cd tutorial`), as in the reader's shell.
    const std::string session = "trap 'export -p > \"" + dir.file(".doc-env") + "\"; pwd > \"" + dir.file(".doc-cwd") +
                                "\"' EXIT\nif [ -f \"" + dir.file(".doc-env") + "\" ]; then . \"" +
                                dir.file(".doc-env") + "\"; cd \"$(cat \"" + dir.file(".doc-cwd") + "\")\"; fi\n";
    ProcessResult result = runProcess({"bash", "-e", "-o", "pipefail", "-c", session + b.text}, dir.path(), env, 600);
    EXPECT_EQ(result.status, 0) << where << ": the block failed (exit status " << result.status << "):\n"
                                << b.text << "---\n"
                                << result.output;
    if (result.status != 0) return;  // later blocks build on this one
    lastRun = &b;
    lastOutput = result.output;
    ++ran;
  }
  RecordProperty("blocks_run", ran);
}

INSTANTIATE_TEST_SUITE_P(Docs, DocCommands, ::testing::ValuesIn(documents()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

// The runner's own conventions, on a document made here: a block that fails, an output that differs and
// an unmarked block are each caught.
TEST(DocConventions, OutputLinesMatchInOrderWithEllipsis) {
  EXPECT_EQ(missingOutput("frames=64 total=...\n", "+ run\nframes=64 total=21.5\n"), "");
  EXPECT_EQ(missingOutput("a\nb\n", "b\na\n"), "b");
  EXPECT_EQ(missingOutput("x (y) [z] 1.5\n", "x (y) [z] 1.5\n"), "");
  EXPECT_EQ(missingOutput("x 1.5\n", "x 105\n"), "x 1.5");
}

TEST(DocConventions, MarkersAreReadFromTheLineBeforeTheFence) {
  const std::vector<Block> blocks = blocksOf(
      "text\n<!-- not run: needs a GPU -->\n```sh\nnvidia-smi\n```\n<!-- file: app.dsp -->\n```cpp\nint x;\n```\n");
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(markerValue(blocks[0].marker, "not run"), std::optional<std::string>("needs a GPU"));
  EXPECT_EQ(blocks[0].text, "nvidia-smi\n");
  EXPECT_EQ(markerValue(blocks[1].marker, "file"), std::optional<std::string>("app.dsp"));
  EXPECT_EQ(markerValue(blocks[1].marker, "not run"), std::nullopt);
}

}  // namespace
}  // namespace dispar::testing
