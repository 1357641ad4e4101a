#include "CommandLine.h"

#include "streammap/ResourceDb.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace dispar::streammap {

bool CommandLine::parse(const CommandSpec& spec, const Args& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      help_ = true;
      printHelp(spec, stdout);
      return true;
    }
    if (arg.size() < 2 || arg[0] != '-') {
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
    for (std::size_t k = 0; k < spec.optionCount; ++k)
      if (name == spec.options[k].name) option = &spec.options[k];
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
  auto it = values_.find(option);
  if (it == values_.end()) return fallback;
  const std::string& text = it->second;
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end || errno || v < min || v > max) {
    reportError("option " + option + ": expected an integer from " + std::to_string(min) + " to " +
                std::to_string(max) + ", got '" + text + "'");
    return std::nullopt;
  }
  return static_cast<int>(v);
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

std::string CommandLine::databasePath() const {
  return has("--db") ? value("--db") : defaultDatabasePath();
}

void CommandLine::printHelp(const CommandSpec& spec, std::FILE* out) {
  std::fprintf(out, "usage: %s\n\n%s\n\noptions:\n", spec.usage, spec.summary);
  for (std::size_t k = 0; k < spec.optionCount; ++k) {
    const OptionSpec& o = spec.options[k];
    std::string left = std::string(o.name) + (o.valueName ? std::string(" ") + o.valueName : "");
    std::fprintf(out, "  %-22s %s\n", left.c_str(), o.help);
  }
  std::fprintf(out, "  %-22s %s\n", "--help", "print this help");
  std::fprintf(out,
               "\nThe database is --db PATH, else $DISPAR_RESOURCE_DB, else %s.\n"
               "PATH is an SQLite file or a PostgreSQL connection string (postgresql://USER@HOST:PORT/DB).\n",
               displayDatabaseName(defaultDatabasePath()).c_str());
}

int reportError(const std::string& message) {
  std::fprintf(stderr, "streammap: error: %s\n", message.c_str());
  return 1;
}

void reportWarning(const std::string& message) {
  std::fprintf(stderr, "streammap: warning: %s\n", message.c_str());
}

bool writeFileAtomically(const std::string& path, const std::string& text, std::string& error) {
  std::string temp = path + ".tmp.XXXXXX";
  int fd = mkstemp(temp.data());
  if (fd < 0) {
    error = path + ": cannot write: " + std::strerror(errno);
    return false;
  }
  std::size_t written = 0;
  while (written < text.size()) {
    ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  bool ok = written == text.size() && ::fchmod(fd, 0644) == 0 && ::fsync(fd) == 0;
  int savedErrno = errno;
  ok = (::close(fd) == 0) && ok;
  if (ok && ::rename(temp.c_str(), path.c_str()) == 0) return true;
  error = path + ": cannot write: " + std::strerror(ok ? errno : savedErrno);
  ::unlink(temp.c_str());
  return false;
}

}  // namespace dispar::streammap
