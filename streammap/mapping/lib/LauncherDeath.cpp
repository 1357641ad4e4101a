#include "streammap/LauncherDeath.h"

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

namespace dispar::streammap {

namespace {

/// Reads a decimal number at `at` (advanced past it); false when there is none or it is absurdly long.
bool readNumber(std::string_view text, std::size_t& at, long& value) {
  const std::size_t start = at;
  value = 0;
  while (at < text.size() && text[at] >= '0' && text[at] <= '9' && at - start < 12)
    value = value * 10 + (text[at++] - '0');
  return at > start && (at == text.size() || text[at] < '0' || text[at] > '9');
}

/// `text` after `prefix` when it starts with it.
std::optional<std::string_view> after(std::string_view text, std::string_view prefix) {
  if (text.substr(0, prefix.size()) != prefix) return std::nullopt;
  return text.substr(prefix.size());
}

std::optional<lang::RankRecord> readRecord(const std::filesystem::path& file, int rank) {
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  lang::RankRecord record;
  if (!in || !lang::parseRankRecord(rank, text.str(), record)) return std::nullopt;
  return record;
}

/// Calls `visit(rank, path)` with every file of the registry folder named "rank-R" followed by exactly
/// `suffix` (files being written, and the other kind of file, do not match).
template <typename Visit>
void forEachRankFile(const std::string& registry, std::string_view suffix, Visit visit) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(registry, ec)) {
    const std::string name = entry.path().filename().string();
    const std::string_view prefix = lang::kRankRecordPrefix;
    if (name.substr(0, prefix.size()) != prefix) continue;
    std::size_t at = prefix.size();
    long rank = 0;
    if (!readNumber(name, at, rank) || std::string_view(name).substr(at) != suffix) continue;
    visit(static_cast<int>(rank), entry.path());
  }
}

/// Calls `visit` with every rank record in the registry folder (files "rank-R").
template <typename Visit>
void forEachRankRecord(const std::string& registry, Visit visit) {
  forEachRankFile(registry, "", [&](int rank, const std::filesystem::path& file) {
    if (const std::optional<lang::RankRecord> record = readRecord(file, rank)) visit(*record);
  });
}

/// The end mark in file `file` (an empty `how` where there is none).
lang::RankEnd readRankEndFile(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  return in ? lang::parseRankEnd(text.str()) : lang::RankEnd{};
}

/// Rank `rank`'s end mark in the registry (an empty `how` where it left none).
lang::RankEnd readRankEnd(const std::string& registry, int rank) {
  return readRankEndFile(std::filesystem::path(registry) / lang::rankEndFileName(rank));
}

/// Calls `visit(rank, end)` with every end mark in the registry folder (files "rank-R.end"), reading
/// nothing else: `streammap run` looks twice a second while its job runs.
template <typename Visit>
void forEachRankEnd(const std::string& registry, Visit visit) {
  forEachRankFile(registry, lang::kRankEndSuffix,
                  [&](int rank, const std::filesystem::path& file) { visit(rank, readRankEndFile(file)); });
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

}  // namespace

void LauncherDeathReader::line(std::string_view text) {
  if (first_) return;
  // hydra: "=   PID 13950 RUNNING AT n1", then "=   EXIT CODE: 9", whose number is the signal for a rank a
  // signal killed (and an exit status otherwise: only 9, which nothing else in a DISPAR rank exits with
  // silently, is read as SIGKILL; a rank that reports its own end printed its line before).
  if (auto rest = after(text, "=")) {
    const std::string_view body = trimmed(*rest);
    std::size_t at = 0;
    long value = 0;
    if (auto pidText = after(body, "PID ")) {
      if (readNumber(*pidText, at, value) && pidText->substr(at, 12) == " RUNNING AT ") {
        hydraPid_ = value;
        hydraHost_ = std::string(trimmed(pidText->substr(at + 12)));
      }
    } else if (auto code = after(body, "EXIT CODE:")) {
      const std::string_view number = trimmed(*code);
      at = 0;
      if (hydraPid_ >= 0 && readNumber(number, at, value) && at == number.size() && value == SIGKILL)
        first_ = LauncherDeath{-1, hydraPid_, hydraHost_, SIGKILL};
    }
    return;
  }
  // srun: "srun: error: HOST: task 3: Killed" or "srun: error: HOST: tasks 2-3: Killed".
  if (auto rest = after(text, "srun: error: ")) {
    const std::string_view body = trimmed(*rest);
    const std::size_t hostEnd = body.find(": task");
    if (hostEnd == std::string_view::npos || body.size() < 6 || body.substr(body.size() - 6) != "Killed") return;
    std::string_view tasks = body.substr(hostEnd + 6);
    if (tasks.substr(0, 1) == "s") tasks.remove_prefix(1);
    tasks = trimmed(tasks);
    std::size_t at = 0;
    long rank = 0;
    if (!readNumber(tasks.substr(0, tasks.find_first_of("-,:")), at, rank)) return;
    first_ = LauncherDeath{static_cast<int>(rank), -1, std::string(body.substr(0, hostEnd)), SIGKILL};
    return;
  }
  // Open MPI: "mpirun noticed that process rank 0 with PID 123 on node n1 exited on signal 9 (Killed)."
  const std::size_t noticed = text.find(" noticed that process rank ");
  if (noticed == std::string_view::npos) return;
  std::string_view rest = text.substr(noticed + 27);
  std::size_t at = 0;
  long rank = 0, pid = 0, signal = 0;
  if (!readNumber(rest, at, rank) || rest.substr(at, 10) != " with PID ") return;
  rest.remove_prefix(at + 10);
  at = 0;
  if (!readNumber(rest, at, pid) || rest.substr(at, 9) != " on node ") return;
  rest.remove_prefix(at + 9);
  const std::size_t hostEnd = rest.find(" exited on signal ");
  if (hostEnd == std::string_view::npos) return;
  const std::string_view host = rest.substr(0, hostEnd);
  rest.remove_prefix(hostEnd + 18);
  at = 0;
  if (!readNumber(rest, at, signal) || signal <= 0 || signal >= 65) return;
  first_ = LauncherDeath{static_cast<int>(rank), pid, std::string(host), static_cast<int>(signal)};
}

std::optional<lang::RankRecord> recordOfDeadRank(const std::string& registry, const LauncherDeath& death) {
  if (registry.empty()) return std::nullopt;
  if (death.rank >= 0)
    return readRecord(std::filesystem::path(registry) / lang::rankRecordFileName(death.rank), death.rank);
  std::optional<lang::RankRecord> found;
  forEachRankRecord(registry, [&](const lang::RankRecord& record) {
    if (!found && record.pid == death.pid && (death.host.empty() || record.host == death.host)) found = record;
  });
  return found;
}

std::optional<int> abortingRank(const std::string& registry) {
  if (registry.empty()) return std::nullopt;
  std::optional<int> found;
  forEachRankEnd(registry, [&](int rank, const lang::RankEnd& end) {
    if (end.how == lang::kRankAborted && (!found || rank < *found)) found = rank;
  });
  return found;
}

bool everyRankEndedWell(const std::string& registry, int rankCount) {
  if (registry.empty() || rankCount <= 0) return false;
  for (int rank = 0; rank < rankCount; ++rank) {
    const lang::RankEnd end = readRankEnd(registry, rank);
    if (end.how != lang::kRankEnded || end.status != 0) return false;
  }
  return true;
}

SilentNodes silentNodes(const std::string& registry, const std::set<int>& reported) {
  if (registry.empty()) return {};
  SilentNodes result;
  std::map<std::string, SilentNode> byHost;
  std::map<std::string, bool> allSilent;
  bool aborted = false;
  forEachRankRecord(registry, [&](const lang::RankRecord& record) {
    const std::string how = readRankEnd(registry, record.rank).how;
    aborted = aborted || how == lang::kRankAborted;
    const bool silent = how.empty() && reported.count(record.rank) == 0;
    result.heard = result.heard || !silent;
    auto [state, fresh] = allSilent.try_emplace(record.host, silent);
    if (!fresh) state->second = state->second && silent;
    SilentNode& node = byHost[record.host];
    node.host = record.host;
    node.ranks.push_back(record);
  });
  if (aborted) return {};
  for (auto& [host, node] : byHost) {
    if (!allSilent[host]) continue;
    std::sort(node.ranks.begin(), node.ranks.end(),
              [](const lang::RankRecord& a, const lang::RankRecord& b) { return a.rank < b.rank; });
    result.nodes.push_back(std::move(node));
  }
  return result;
}

}  // namespace dispar::streammap
