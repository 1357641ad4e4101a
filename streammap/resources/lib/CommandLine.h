// Option parsing for the resources subcommands: each command describes its options as a table, and
// gets `--help` text and errors ("unknown option", "missing value") from it.
#ifndef STREAMMAP_LIB_COMMAND_LINE_H
#define STREAMMAP_LIB_COMMAND_LINE_H

#include "streammap/Commands.h"

#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dispar::streammap {

struct OptionSpec {
  const char* name;       // "--db"
  const char* valueName;  // "PATH", or nullptr for a flag
  const char* help;
};

struct CommandSpec {
  const char* usage;    // "streammap nodes [options]"
  const char* summary;  // one paragraph
  const OptionSpec* options;
  std::size_t optionCount;
};

class CommandLine {
 public:
  /// Parses `args`; on failure prints "streammap: error: ..." and the usage to stderr and returns false.
  /// `--help` prints the help to stdout and sets helpRequested().
  bool parse(const CommandSpec& spec, const Args& args);

  bool helpRequested() const { return help_; }
  bool has(const std::string& option) const { return values_.count(option) != 0; }
  std::string value(const std::string& option, const std::string& fallback = "") const;
  const std::vector<std::string>& positional() const { return positional_; }

  /// Reads an integer option in [min, max]; prints an error and returns nullopt when malformed.
  std::optional<int> intValue(const std::string& option, int fallback, int min, int max) const;
  /// Reads a number option (e.g. "0.1") in [min, max]; prints an error and returns nullopt when malformed.
  std::optional<double> doubleValue(const std::string& option, double fallback, double min, double max) const;

  /// The database (file path or postgresql:// connection string): --db, else defaultDatabasePath().
  std::string databasePath() const;

  static void printHelp(const CommandSpec& spec, std::FILE* out);

 private:
  bool help_ = false;
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

/// Prints "streammap: error: MESSAGE" to stderr and returns 1 (the exit status for failures).
int reportError(const std::string& message);
void reportWarning(const std::string& message);

/// Writes `text` to `path` through a temporary file in the same directory and rename(), so that readers
/// never see a half-written file.
bool writeFileAtomically(const std::string& path, const std::string& text, std::string& error);

}  // namespace dispar::streammap

#endif
