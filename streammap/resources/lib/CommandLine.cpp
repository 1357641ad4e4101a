#include "streammap/CommandLine.h"

#include "streammap/ResourceDb.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace dispar::streammap {

std::vector<OptionSpec> joinOptions(std::initializer_list<std::vector<OptionSpec>> groups) {
  std::vector<OptionSpec> all;
  for (const std::vector<OptionSpec>& group : groups) all.insert(all.end(), group.begin(), group.end());
  return all;
}

bool CommandLine::parse(const CommandSpec& spec, const Args& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      help_ = true;
      printHelp(spec, stdout);
      return true;
    }
    if (arg == "--version") {
      help_ = true;
      std::printf("streammap %s\n", streammapVersion());
      return true;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      if (spec.firstArgumentEndsOptions) {
        positional_.assign(args.begin() + static_cast<long>(i), args.end());
        return true;
      }
      positional_.push_back(arg);
      continue;
    }
    std::string name = arg, inlineValue;
    bool hasInline = false;
    if (std::size_t eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      inlineValue = arg.substr(eq + 1);
      hasInline = true;
    }
    const OptionSpec* option = nullptr;
    for (const OptionSpec& candidate : spec.options)
      if (name == candidate.name) option = &candidate;
    if (!option) {
      reportError("unknown option '" + name + "'");
      std::fprintf(stderr, "usage: %s\n", spec.usage);
      return false;
    }
    if (!option->valueName) {
      if (hasInline) {
        reportError("option " + name + " takes no value");
        return false;
      }
      values_[name] = "";
      continue;
    }
    if (hasInline) {
      values_[name] = inlineValue;
    } else if (i + 1 < args.size()) {
      values_[name] = args[++i];
    } else {
      reportError("option " + name + " needs a value (" + option->valueName + ")");
      return false;
    }
  }
  return true;
}

std::string CommandLine::value(const std::string& option, const std::string& fallback) const {
  auto it = values_.find(option);
  return it == values_.end() ? fallback : it->second;
}

std::optional<int> CommandLine::intValue(const std::string& option, int fallback, int min, int max) const {
  const std::optional<long long> v = integerValue(option, fallback, min, max);
  return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
}

std::optional<long long> CommandLine::integerValue(const std::string& option, long long fallback, long long min,
                                                   long long max) const {
  auto it = values_.find(option);
  if (it == values_.end()) return fallback;
  const std::string& text = it->second;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end || errno || v < min || v > max) {
    reportError("option " + option + ": expected an integer from " + std::to_string(min) + " to " +
                std::to_string(max) + ", got '" + text + "'");
    return std::nullopt;
  }
  return v;
}

std::optional<double> CommandLine::doubleValue(const std::string& option, double fallback, double min,
                                               double max) const {
  auto it = values_.find(option);
  if (it == values_.end()) return fallback;
  const std::string& text = it->second;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  // `!(v >= min)` also refuses NaN.
  if (text.empty() || *end || errno || !(v >= min) || v > max) {
    char range[64];
    std::snprintf(range, sizeof range, "%g to %g", min, max);
    reportError("option " + option + ": expected a number from " + range + ", got '" + text + "'");
    return std::nullopt;
  }
  return v;
}

std::string CommandLine::databasePath() const { return has("--db") ? value("--db") : defaultDatabasePath(); }

void CommandLine::printHelp(const CommandSpec& spec, std::FILE* out) {
  std::fprintf(out, "usage: %s\n\n%s\n\noptions:\n", spec.usage, spec.summary);
  bool database = false;
  for (const OptionSpec& o : spec.options) {
    database = database || std::string(o.name) == "--db";
    std::string left = std::string(o.name) + (o.valueName ? std::string(" ") + o.valueName : "");
    // A long option and value get a line of their own, the help under the others'.
    if (left.size() > 22)
      std::fprintf(out, "  %s\n  %-22s %s\n", left.c_str(), "", o.help);
    else
      std::fprintf(out, "  %-22s %s\n", left.c_str(), o.help);
  }
  std::fprintf(out, "  %-22s %s\n", "--help", "print this help");
  std::fprintf(out, "  %-22s %s\n", "--version", "print streammap's version");
  if (!database) return;
  std::fprintf(out,
               "\nThe database is --db PATH, else $DISPAR_RESOURCE_DB, else %s.\n"
               "PATH is an SQLite file or a PostgreSQL connection string (postgresql://USER@HOST:PORT/DB).\n",
               displayDatabaseName(defaultDatabasePath()).c_str());
}

const char* streammapVersion() { return DISPAR_VERSION; }

int reportUsageError(const std::string& message) {
  std::fprintf(stderr, "streammap: error: %s\n", message.c_str());
  return kExitUsage;
}

int reportError(const std::string& message) {
  std::fprintf(stderr, "streammap: error: %s\n", message.c_str());
  return kExitFailure;
}

void reportWarning(const std::string& message) { std::fprintf(stderr, "streammap: warning: %s\n", message.c_str()); }

}  // namespace dispar::streammap
