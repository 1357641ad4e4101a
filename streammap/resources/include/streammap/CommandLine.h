// The one option-parsing layer of every streammap command: each command describes its options as a
// table, and gets `--help` text and errors ("unknown option", "missing value") from it. Options are
// `--name VALUE` or `--name=VALUE`; tables may be joined from shared groups (joinOptions).
#ifndef STREAMMAP_COMMAND_LINE_H
#define STREAMMAP_COMMAND_LINE_H

#include "streammap/Commands.h"

#include <cstdio>
#include <initializer_list>
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
  std::vector<OptionSpec> options;
  /// `run ./APP ARGS...`: the first argument that is not an option ends the options; it and everything
  /// after it are positional, dashes included.
  bool firstArgumentEndsOptions = false;
};

/// Concatenates option groups (a command's own options and shared ones) into one table.
std::vector<OptionSpec> joinOptions(std::initializer_list<std::vector<OptionSpec>> groups);

class CommandLine {
 public:
  /// Parses `args`; on failure prints "streammap: error: ..." and the usage to stderr and returns false
  /// (the command then exits kExitUsage). `--help` prints the help and `--version` the version to stdout;
  /// both set helpRequested() (the command exits 0).
  bool parse(const CommandSpec& spec, const Args& args);

  bool helpRequested() const { return help_; }
  bool has(const std::string& option) const { return values_.count(option) != 0; }
  std::string value(const std::string& option, const std::string& fallback = "") const;
  const std::vector<std::string>& positional() const { return positional_; }

  /// Reads an integer option in [min, max]; prints an error and returns nullopt when malformed.
  std::optional<int> intValue(const std::string& option, int fallback, int min, int max) const;
  std::optional<long long> integerValue(const std::string& option, long long fallback, long long min,
                                        long long max) const;
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

/// Exit statuses, as getopt tools have them: 1 when the command failed, 2 when its command line was wrong
/// (an unknown command, subcommand or option, a missing or extra argument, an option value out of range).
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

/// The version every streammap command prints for --version ("streammap 0.1.0").
const char* streammapVersion();

/// Prints "streammap: error: MESSAGE" to stderr and returns kExitFailure.
int reportError(const std::string& message);
/// Prints "streammap: error: MESSAGE" to stderr and returns kExitUsage: a wrong command line.
int reportUsageError(const std::string& message);
void reportWarning(const std::string& message);

}  // namespace dispar::streammap

#endif  // STREAMMAP_COMMAND_LINE_H
