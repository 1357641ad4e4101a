#include "streammap/Slurm.h"

#include "streammap/FileDescriptor.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <map>
#include <poll.h>
#include <set>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <tuple>
#include <unistd.h>

extern char** environ;

namespace dispar::streammap::slurm {

namespace {

/// What a Slurm gres type name tells about a GPU, for nodes no probe has seen. Slurm's type names are
/// chosen by administrators ("a100", "A100_80GB", "tesla_v100"), so a row matches when its key occurs in
/// the lower-cased type; longer keys first ("a100" before "a10", "l40s" before "l40" before "l4").
/// Figures: NVIDIA's data sheets (SM count, boost clock).
struct GpuModel {
  const char* key;
  const char* name;
  int ccMajor, ccMinor, multiprocessors, clockMHz;
};
constexpr GpuModel kGpuModels[] = {
    {"gh200", "NVIDIA GH200", 9, 0, 132, 1980}, {"h200", "NVIDIA H200", 9, 0, 132, 1980},
    {"h100", "NVIDIA H100", 9, 0, 132, 1980},   {"l40s", "NVIDIA L40S", 8, 9, 142, 2520},
    {"a100", "NVIDIA A100", 8, 0, 108, 1410},   {"v100", "Tesla V100", 7, 0, 80, 1530},
    {"p100", "Tesla P100", 6, 0, 56, 1480},     {"l40", "NVIDIA L40", 8, 9, 142, 2490},
    {"a40", "NVIDIA A40", 8, 6, 84, 1740},      {"a30", "NVIDIA A30", 8, 0, 56, 1440},
    {"a10", "NVIDIA A10", 8, 6, 72, 1695},      {"k80", "Tesla K80", 3, 7, 13, 875},
    {"k40", "Tesla K40", 3, 5, 15, 875},        {"k20", "Tesla K20", 3, 5, 13, 706},
    {"t4", "Tesla T4", 7, 5, 40, 1590},         {"l4", "NVIDIA L4", 8, 9, 58, 2040},
};

// Slurm's node state words (base states and flags, upper case) that make a node unusable for a new job.
const std::string kDrainedStates[] = {"DRAIN", "DRAINED", "DRAINING"};
const std::string kDownStates[] = {"DOWN",       "NOT_RESPONDING", "NO_RESPOND", "FAIL",  "FAILING",
                                   "FUTURE",     "UNKNOWN",        "INVAL",      "ERROR", "POWERED_DOWN",
                                   "POWER_DOWN", "POWERING_DOWN",  "POWERING_UP"};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

GpuInfo gpuOfType(const std::string& type, int index) {
  GpuInfo g;
  g.index = index;
  g.name = type.empty() ? "gpu" : type;
  const std::string key = lower(type);
  for (const GpuModel& m : kGpuModels) {
    if (key.find(m.key) == std::string::npos) continue;
    g.name = m.name;
    g.ccMajor = m.ccMajor;
    g.ccMinor = m.ccMinor;
    g.multiprocessors = m.multiprocessors;
    g.clockKHz = m.clockMHz * 1000;
    break;
  }
  return g;
}

bool allDigits(const std::string& text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

/// A whole number written in decimal digits only, no larger than `max`: false (never a wrapped or clamped
/// value) for anything else, a number past 2^64 included.
bool parseNonNegative(const std::string& text, long& out, long max = std::numeric_limits<long>::max()) {
  if (text.empty() || text.size() > 19 || !allDigits(text)) return false;
  errno = 0;
  const long value = std::strtol(text.c_str(), nullptr, 10);
  if (errno != 0 || value > max) return false;
  out = value;
  return true;
}

/// One count field of a Slurm node record, checked against its NodeLimits bound: absent or empty keeps
/// `out`; a value that is not a number or is beyond `max` fails with `error` naming the field and value.
bool readCount(const std::string& field, const std::string& text, long max, long& out, std::string& error) {
  if (text.empty()) return true;
  if (parseNonNegative(text, out, max)) return true;
  error = field + "=" + escapedForDisplay(text.substr(0, 40)) +
          (allDigits(text) ? " is beyond the limit of " + std::to_string(max) : " is not a count");
  return false;
}

constexpr long kMaxMemoryMiB = static_cast<long>(NodeLimits::kMaxMemoryBytes >> 20);

/// Splits at `separator` outside brackets and parentheses.
std::vector<std::string> splitTopLevel(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string current;
  int depth = 0;
  for (char c : text) {
    if (c == '[' || c == '(') ++depth;
    if (c == ']' || c == ')') --depth;
    if (c == separator && depth == 0) {
      parts.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  parts.push_back(current);
  return parts;
}

/// "0-1,3" -> 0,1,3; every index below NodeLimits::kMaxGpus.
bool expandIndexList(const std::string& text, std::vector<int>& out) {
  for (const std::string& range : splitTopLevel(text, ',')) {
    const std::size_t dash = range.find('-');
    long first = 0, last = 0;
    constexpr long kLastIndex = NodeLimits::kMaxGpus - 1;
    if (dash == std::string::npos) {
      if (!parseNonNegative(range, first, kLastIndex)) return false;
      last = first;
    } else if (!parseNonNegative(range.substr(0, dash), first, kLastIndex) ||
               !parseNonNegative(range.substr(dash + 1), last, kLastIndex) || last < first) {
      return false;
    }
    for (long i = first; i <= last; ++i) out.push_back(static_cast<int>(i));
  }
  return true;
}

/// A count of a `sinfo --json` node: a JSON integer, or Slurm 23.02+'s {"set": true, "infinite": false,
/// "number": N}. Absent, unset or not an integer keeps `out`; a negative value or one beyond `max` (a number
/// past 2^63 included) fails with `error` naming the field.
bool jsonCount(const nlohmann::json& node, const char* key, long long max, long long& out, std::string& error) {
  auto it = node.find(key);
  if (it == node.end()) return true;
  const nlohmann::json* value = &*it;
  if (it->is_object()) {
    if (!it->value("set", true) || !it->contains("number")) return true;
    value = &(*it)["number"];
  }
  if (!value->is_number_integer()) return true;
  if (value->is_number_unsigned() ? value->get<std::uint64_t>() > static_cast<std::uint64_t>(max)
                                  : value->get<long long>() < 0 || value->get<long long>() > max) {
    error = std::string(key) + " " + value->dump() + " is " +
            (value->is_number_unsigned() || value->get<long long>() >= 0 ? "beyond the limit of " + std::to_string(max)
                                                                         : "negative");
    return false;
  }
  out = value->get<long long>();
  return true;
}

std::vector<std::string> splitWords(const std::string& text, const char* separators) {
  std::vector<std::string> words;
  std::string current;
  for (char c : text) {
    if (std::strchr(separators, c)) {
      if (!current.empty()) words.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) words.push_back(current);
  return words;
}

/// Fills the CPU side of a node from Slurm's counts (CPUs, sockets, cores per socket, threads per core).
void setCpus(NodeInfo& n, long long cpus, long long sockets, long long coresPerSocket, long long threadsPerCore) {
  n.threads = static_cast<int>(std::max(1LL, cpus));
  n.sockets = static_cast<int>(std::max(1LL, sockets));
  const long long cores = sockets > 0 && coresPerSocket > 0 ? sockets * coresPerSocket
                          : threadsPerCore > 0              ? cpus / threadsPerCore
                                                            : cpus;
  n.cores = static_cast<int>(std::clamp(cores, 1LL, static_cast<long long>(n.threads)));
}

}  // namespace

bool parseGres(const std::string& gres, std::vector<GpuInfo>& out, std::string& error) {
  out.clear();
  const std::string trimmed = gres == "(null)" || gres == "N/A" ? std::string() : gres;
  if (trimmed.empty()) return true;
  for (const std::string& entry : splitTopLevel(trimmed, ',')) {
    std::string head = entry, detail;
    if (const std::size_t paren = entry.find('('); paren != std::string::npos) {
      head = entry.substr(0, paren);
      const std::size_t close = entry.rfind(')');
      detail =
          entry.substr(paren + 1, close == std::string::npos || close < paren ? std::string::npos : close - paren - 1);
    }
    const std::vector<std::string> fields = splitTopLevel(head, ':');
    if (fields.empty() || fields[0] != "gpu") continue;
    std::string type;
    long count = 1;
    std::string countText;
    if (fields.size() == 2) {
      (allDigits(fields[1]) ? countText : type) = fields[1];
    } else if (fields.size() >= 3) {
      type = fields[1];
      countText = fields[2];
    }
    // Checked against the per-node limit before any GPU is made: "gpu:99999999999" is a typo, not a node.
    if (!countText.empty() &&
        !parseNonNegative(countText, count, NodeLimits::kMaxGpus - static_cast<long>(out.size()))) {
      error = "gres '" + escapedForDisplay(entry) + "': '" + escapedForDisplay(countText) + "' " +
              (allDigits(countText)
                   ? "GPUs are more than the limit of " + std::to_string(NodeLimits::kMaxGpus) + " per node"
                   : "is not a GPU count");
      return false;
    }
    // "(IDX:0-1,3)" of `scontrol show job -d` lists the GPU ordinals; "(S:0-1)" (sockets) says nothing here.
    std::vector<int> indices;
    if (const std::size_t idx = detail.find("IDX:"); idx != std::string::npos) {
      const std::string list = detail.substr(idx + 4);
      if (list != "N/A" && !expandIndexList(list, indices)) {
        error = "gres '" + entry + "': malformed index list '" + list + "'";
        return false;
      }
    }
    if (!indices.empty() && static_cast<long>(indices.size()) != count) {
      error =
          "gres '" + entry + "': " + std::to_string(count) + " GPUs but " + std::to_string(indices.size()) + " indices";
      return false;
    }
    const int base = out.empty() ? 0 : out.back().index + 1;
    for (long i = 0; i < count; ++i)
      out.push_back(
          gpuOfType(type, indices.empty() ? base + static_cast<int>(i) : indices[static_cast<std::size_t>(i)]));
  }
  return true;
}

NodeStatus statusOfState(const std::vector<std::string>& words) {
  bool down = false, drained = false;
  for (const std::string& raw : words) {
    for (std::string word : splitWords(raw, "+")) {
      // sinfo's state suffixes: '*' not responding and '~' powered off mean down; the others ('#', '!',
      // '%', '$', '@', '^', '-') are transitions or reservations of a node that still runs jobs.
      while (!word.empty() && std::strchr("*~#!%$@^-", word.back())) {
        if (word.back() == '*' || word.back() == '~') down = true;
        word.pop_back();
      }
      word = upper(word);
      const auto among = [&](const auto& table) {
        return std::find(std::begin(table), std::end(table), word) != std::end(table);
      };
      if (among(kDrainedStates))
        drained = true;
      else if (among(kDownStates))
        down = true;
    }
  }
  if (drained) return NodeStatus::Drained;
  return down ? NodeStatus::Down : NodeStatus::Up;
}

bool parseSinfoJson(const std::string& text, std::vector<NodeInfo>& out, std::string& error) {
  out.clear();
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    error = "sinfo --json: output is not a JSON object";
    return false;
  }
  auto nodes = doc.find("nodes");
  if (nodes == doc.end() || !nodes->is_array()) {
    // `sinfo --json` of 23.02+ lists "sinfo" entries; `scontrol show nodes --json` lists "nodes".
    error = "sinfo --json: no \"nodes\" array (use `sinfo --json` of Slurm 22.05 or later)";
    return false;
  }
  std::set<std::string> seen;
  for (const nlohmann::json& j : *nodes) {
    if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) {
      error = "sinfo --json: a node without a name";
      return false;
    }
    NodeInfo n;
    n.host = j["name"].get<std::string>();
    n.source = RecordSource::Import;
    long long cpus = 1, sockets = 0, cores = 0, threads = 0, memory = 0;
    for (const auto& [key, value, max] :
         {std::tuple<const char*, long long*, long long>{"cpus", &cpus, NodeLimits::kMaxHardwareThreads},
          {"sockets", &sockets, NodeLimits::kMaxSockets},
          {"cores", &cores, NodeLimits::kMaxHardwareThreads},
          {"threads", &threads, NodeLimits::kMaxHardwareThreads},
          {"real_memory", &memory, kMaxMemoryMiB}}) {
      if (!jsonCount(j, key, max, *value, error)) {
        error = "sinfo --json: node " + escapedForDisplay(n.host) + ": " + error;
        return false;
      }
    }
    setCpus(n, cpus, sockets, cores, threads);
    n.memoryBytes = static_cast<std::uint64_t>(memory) << 20;
    const std::string gres = j.contains("gres") && j["gres"].is_string() ? j["gres"].get<std::string>() : "";
    std::string gresError;
    if (!parseGres(gres, n.gpus, gresError)) {
      error = "sinfo --json: node " + escapedForDisplay(n.host) + ": " + gresError;
      return false;
    }
    std::vector<std::string> state;
    for (const char* key : {"state", "state_flags"}) {
      if (!j.contains(key)) continue;
      if (j[key].is_string()) state.push_back(j[key].get<std::string>());
      if (j[key].is_array())
        for (const nlohmann::json& w : j[key])
          if (w.is_string()) state.push_back(w.get<std::string>());
    }
    n.status = statusOfState(state);
    if (!seen.insert(n.host).second) continue;  // a node in several partitions is listed once per partition
    out.push_back(std::move(n));
  }
  std::sort(out.begin(), out.end(), [](const NodeInfo& a, const NodeInfo& b) { return a.host < b.host; });
  return true;
}

bool parseScontrolNodes(const std::string& text, std::vector<NodeInfo>& out, std::string& error) {
  out.clear();
  std::istringstream lines(text);
  int lineNumber = 0;
  for (std::string line; std::getline(lines, line);) {
    ++lineNumber;
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    // Values may hold spaces (OS=Linux 6.1 #1 SMP ...): a word without '=' continues the previous value.
    std::map<std::string, std::string> fields;
    std::string lastKey;
    for (const std::string& word : splitWords(line, " \t")) {
      const std::size_t eq = word.find('=');
      if (eq == std::string::npos || eq == 0) {
        if (!lastKey.empty()) fields[lastKey] += " " + word;
        continue;
      }
      lastKey = word.substr(0, eq);
      fields[lastKey] = word.substr(eq + 1);
    }
    const std::string where = "scontrol show node -o, line " + std::to_string(lineNumber);
    if (!fields.count("NodeName")) {
      error = where + ": no NodeName=";
      return false;
    }
    NodeInfo n;
    n.host = fields["NodeName"];
    n.source = RecordSource::Import;
    long cpus = 1, sockets = 0, coresPerSocket = 0, threadsPerCore = 0, memory = 0;
    for (const auto& [key, value, max] :
         {std::tuple<const char*, long*, long>{"CPUTot", &cpus, NodeLimits::kMaxHardwareThreads},
          {"Sockets", &sockets, NodeLimits::kMaxSockets},
          {"CoresPerSocket", &coresPerSocket, NodeLimits::kMaxHardwareThreads},
          {"ThreadsPerCore", &threadsPerCore, NodeLimits::kMaxHardwareThreads},
          {"RealMemory", &memory, kMaxMemoryMiB}}) {
      if (!readCount(key, fields[key], max, *value, error)) {
        error = where + ": node " + escapedForDisplay(n.host) + ": " + error;
        return false;
      }
    }
    setCpus(n, cpus, sockets, coresPerSocket, threadsPerCore);
    n.memoryBytes = static_cast<std::uint64_t>(memory) << 20;
    std::string gresError;
    if (!parseGres(fields["Gres"], n.gpus, gresError)) {
      error = where + ": node " + escapedForDisplay(n.host) + ": " + gresError;
      return false;
    }
    n.status = statusOfState({fields["State"]});
    out.push_back(std::move(n));
  }
  std::sort(out.begin(), out.end(), [](const NodeInfo& a, const NodeInfo& b) { return a.host < b.host; });
  return true;
}

bool expandHostList(const std::string& list, std::vector<std::string>& out, std::string& error) {
  out.clear();
  for (const std::string& item : splitTopLevel(list, ',')) {
    if (item.empty()) {
      error = "host list '" + list + "': empty entry";
      return false;
    }
    // Expand bracket groups left to right: "rack[1-2]-n[01-02]".
    std::vector<std::string> names = {""};
    std::size_t pos = 0;
    while (pos < item.size()) {
      const std::size_t open = item.find('[', pos);
      const std::string literal = item.substr(pos, open == std::string::npos ? std::string::npos : open - pos);
      for (std::string& n : names) n += literal;
      if (open == std::string::npos) break;
      const std::size_t close = item.find(']', open);
      if (close == std::string::npos) {
        error = "host list '" + list + "': '[' without ']'";
        return false;
      }
      std::vector<std::string> suffixes;
      for (const std::string& range : splitTopLevel(item.substr(open + 1, close - open - 1), ',')) {
        const std::size_t dash = range.find('-');
        const std::string firstText = range.substr(0, dash);
        const std::string lastText = dash == std::string::npos ? firstText : range.substr(dash + 1);
        long first = 0, last = 0;
        if (!parseNonNegative(firstText, first) || !parseNonNegative(lastText, last) || last < first ||
            last - first > 100000) {
          error = "host list '" + list + "': malformed range '" + range + "'";
          return false;
        }
        const std::size_t width = firstText.size();  // "01-10": zero-padded to the first bound's width
        for (long i = first; i <= last; ++i) {
          std::string digits = std::to_string(i);
          if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
          suffixes.push_back(digits);
        }
      }
      std::vector<std::string> expanded;
      for (const std::string& n : names)
        for (const std::string& s : suffixes) expanded.push_back(n + s);
      names = std::move(expanded);
      pos = close + 1;
    }
    out.insert(out.end(), names.begin(), names.end());
  }
  return true;
}

bool expandCountList(const std::string& list, std::vector<int>& out, std::string& error) {
  out.clear();
  for (const std::string& item : splitTopLevel(list, ',')) {
    long count = 0, times = 1;
    const std::size_t paren = item.find("(x");
    const bool repeated = paren != std::string::npos && !item.empty() && item.back() == ')';
    if (!parseNonNegative(item.substr(0, repeated ? paren : std::string::npos), count,
                          NodeLimits::kMaxHardwareThreads) ||
        (repeated && !parseNonNegative(item.substr(paren + 2, item.size() - paren - 3), times)) || times > 100000) {
      error = "'" + list + "': malformed count list (expected e.g. '4(x2),2')";
      return false;
    }
    for (long i = 0; i < times; ++i) out.push_back(static_cast<int>(count));
  }
  return true;
}

bool applyJobDetails(const std::string& text, Allocation& allocation, std::string& error) {
  std::map<std::string, std::vector<GpuInfo>> gpusOf;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::map<std::string, std::string> fields;
    for (const std::string& word : splitWords(line, " \t")) {
      const std::size_t eq = word.find('=');
      if (eq != std::string::npos) fields[word.substr(0, eq)] = word.substr(eq + 1);
    }
    // Only the per-node detail lines have both Nodes= and CPU_IDs=.
    if (!fields.count("Nodes") || !fields.count("CPU_IDs")) continue;
    std::vector<std::string> hosts;
    std::vector<GpuInfo> gpus;
    if (!expandHostList(fields["Nodes"], hosts, error)) return false;
    if (!parseGres(fields["GRES"], gpus, error)) {
      error = "scontrol show job -d: " + error;
      return false;
    }
    for (const std::string& h : hosts) gpusOf[h] = gpus;
  }
  if (gpusOf.empty()) {
    error = "scontrol show job -d: no per-node lines (Nodes=... CPU_IDs=... GRES=...)";
    return false;
  }
  for (AllocatedNode& n : allocation.nodes) n.gpus = gpusOf.count(n.host) ? gpusOf[n.host] : std::vector<GpuInfo>{};
  return true;
}

namespace {

/// A pipe whose two ends close on scope exit.
struct Pipe {
  FileDescriptor read, write;
  bool open(std::string& error) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      error = std::string("pipe: ") + std::strerror(errno);
      return false;
    }
    read = FileDescriptor(fds[0]);
    write = FileDescriptor(fds[1]);
    return true;
  }
};

}  // namespace

bool runCommand(const std::vector<std::string>& argv, std::string& output, std::string& error) {
  output.clear();
  Pipe out, err;
  if (!out.open(error) || !err.open(error)) return false;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out.write.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.write.get(), STDERR_FILENO);
  std::vector<char*> cargv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, cargv[0], &actions, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  // Our copies of the write ends go, so that the reads end when the child's do.
  out.write.close();
  err.write.close();
  if (spawned != 0) {
    error = "cannot run " + argv[0] + ": " + std::strerror(spawned);
    return false;
  }
  // Read both pipes until both close, so that neither side blocks on a full pipe.
  std::string errText;
  pollfd fds[2] = {{out.read.get(), POLLIN, 0}, {err.read.get(), POLLIN, 0}};
  int open = 2;
  while (open > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (pollfd& p : fds) {
      if (p.fd < 0 || !(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buffer[65536];
      const ssize_t got = ::read(p.fd, buffer, sizeof buffer);
      if (got > 0) {
        (&p == &fds[0] ? output : errText).append(buffer, static_cast<std::size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        p.fd = -1;  // this end is done (its descriptor closes with its Pipe)
        --open;
      }
    }
  }
  out.read.close();  // a child still writing (after a poll failure) gets EPIPE instead of blocking
  err.read.close();
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
  std::string command;
  for (const std::string& a : argv) command += (command.empty() ? "" : " ") + a;
  while (!errText.empty() && (errText.back() == '\n' || errText.back() == '\r')) errText.pop_back();
  error = "'" + command + "' failed" +
          (WIFEXITED(status) ? " with exit status " + std::to_string(WEXITSTATUS(status))
                             : std::string(" (killed by signal ") + std::to_string(WTERMSIG(status)) + ")") +
          (errText.empty() ? std::string() : ": " + errText);
  return false;
}

bool queryNodes(std::vector<NodeInfo>& out, std::string& how, std::string& error, const CommandRunner& run) {
  std::string text, jsonError;
  if (run({"sinfo", "--json"}, text, jsonError) && parseSinfoJson(text, out, jsonError)) {
    how = "sinfo --json";
    return true;
  }
  // Slurm before 22.05, or built without the JSON plugin: the one-line-per-node text form.
  std::string textError;
  if (run({"scontrol", "show", "node", "-o"}, text, textError) && parseScontrolNodes(text, out, textError)) {
    how = "scontrol show node -o (sinfo --json: " + jsonError + ")";
    return true;
  }
  error = "cannot read Slurm's nodes: " + jsonError + "; " + textError;
  return false;
}

bool currentAllocation(std::optional<Allocation>& out, std::string& error, const CommandRunner& run,
                       const std::function<const char*(const char*)>& getenvFn) {
  const auto env = [&](const char* name) -> std::string {
    const char* value = getenvFn ? getenvFn(name) : std::getenv(name);
    return value ? value : "";
  };
  out.reset();
  Allocation a;
  a.jobId = env("SLURM_JOB_ID");
  if (a.jobId.empty()) return true;
  const std::string nodeList = env("SLURM_JOB_NODELIST");
  const std::string cpusList = env("SLURM_JOB_CPUS_PER_NODE");
  if (nodeList.empty() || cpusList.empty()) {
    error = "SLURM_JOB_ID=" + a.jobId + " is set but SLURM_JOB_NODELIST or SLURM_JOB_CPUS_PER_NODE is not";
    return false;
  }
  std::vector<std::string> hosts;
  std::vector<int> cpus;
  if (!expandHostList(nodeList, hosts, error)) {
    error = "SLURM_JOB_NODELIST: " + error;
    return false;
  }
  if (!expandCountList(cpusList, cpus, error)) {
    error = "SLURM_JOB_CPUS_PER_NODE: " + error;
    return false;
  }
  if (cpus.size() != hosts.size()) {
    error = "SLURM_JOB_CPUS_PER_NODE='" + cpusList + "' counts " + std::to_string(cpus.size()) + " nodes, " +
            "SLURM_JOB_NODELIST='" + nodeList + "' names " + std::to_string(hosts.size());
    return false;
  }
  for (std::size_t i = 0; i < hosts.size(); ++i) a.nodes.push_back({hosts[i], cpus[i], std::nullopt});

  std::string details, detailError;
  if (run({"scontrol", "show", "job", "-d", a.jobId}, details, detailError) &&
      applyJobDetails(details, a, detailError)) {
    a.notes.push_back("GPUs per node from 'scontrol show job -d " + a.jobId + "'");
  } else if (const std::string perNode = env("SLURM_GPUS_ON_NODE"); !perNode.empty()) {
    std::vector<int> count;
    std::string countError;
    if (!expandCountList(perNode, count, countError) || count.size() != 1) {
      error = "SLURM_GPUS_ON_NODE='" + perNode + "' is not a count";
      return false;
    }
    for (AllocatedNode& n : a.nodes) {
      n.gpus = std::vector<GpuInfo>{};
      for (int i = 0; i < count[0]; ++i) n.gpus->push_back(gpuOfType("", i));
    }
    a.notes.push_back("GPUs per node from SLURM_GPUS_ON_NODE=" + perNode + " (" + detailError + ")");
  } else {
    for (AllocatedNode& n : a.nodes) n.gpus = std::vector<GpuInfo>{};
    a.notes.push_back("no GPU allocated as far as Slurm says (" + detailError + ")");
  }
  out = std::move(a);
  return true;
}

NodeInfo mergeNode(const NodeInfo* stored, const NodeInfo& fromSlurm) {
  if (stored == nullptr) return fromSlurm;
  NodeInfo merged = *stored;
  merged.status = fromSlurm.status;
  if (stored->memoryBytes == 0) merged.memoryBytes = fromSlurm.memoryBytes;
  // The scheduler hands out Slurm's GPUs: keep the probed details of each GPU Slurm also lists (by index),
  // take Slurm's description for the others.
  merged.gpus.clear();
  for (const GpuInfo& g : fromSlurm.gpus) {
    auto probed =
        std::find_if(stored->gpus.begin(), stored->gpus.end(), [&](const GpuInfo& p) { return p.index == g.index; });
    merged.gpus.push_back(probed != stored->gpus.end() ? *probed : g);
  }
  return merged;
}

void restrictToAllocation(Cluster& cluster, const Allocation& allocation, std::vector<std::string>& notes) {
  Cluster restricted;
  for (const AllocatedNode& a : allocation.nodes) {
    auto it =
        std::find_if(cluster.nodes.begin(), cluster.nodes.end(), [&](const NodeInfo& n) { return n.host == a.host; });
    NodeInfo node;
    std::string origin;
    if (it != cluster.nodes.end()) {
      node = *it;
      origin = "recorded";
    } else {
      node.host = a.host;
      node.source = RecordSource::Import;
      node.cores = node.threads = std::max(1, a.cpus);
      origin = "not recorded, as Slurm describes it";
    }
    node.status = NodeStatus::Up;
    node.threads = std::max(1, std::min(node.threads, a.cpus));
    node.cores = std::max(1, std::min(node.cores, a.cpus));
    if (a.gpus) {
      std::vector<GpuInfo> usable;
      for (const GpuInfo& g : *a.gpus) {
        auto known =
            std::find_if(node.gpus.begin(), node.gpus.end(), [&](const GpuInfo& p) { return p.index == g.index; });
        usable.push_back(known != node.gpus.end() ? *known : g);
      }
      node.gpus = std::move(usable);
    }
    notes.push_back(a.host + ": " + std::to_string(a.cpus) + (a.cpus == 1 ? " CPU, " : " CPUs, ") +
                    std::to_string(node.gpus.size()) + (node.gpus.size() == 1 ? " GPU" : " GPUs") + " (" + origin +
                    ")");
    restricted.nodes.push_back(std::move(node));
  }
  std::sort(restricted.nodes.begin(), restricted.nodes.end(),
            [](const NodeInfo& x, const NodeInfo& y) { return x.host < y.host; });
  cluster = std::move(restricted);
}

}  // namespace dispar::streammap::slurm
