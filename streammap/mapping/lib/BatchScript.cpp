#include "streammap/BatchScript.h"

#include "streammap/Cluster.h"

#include "dispar_lang/MapRank.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>

namespace dispar::streammap {

namespace {

bool isSlurmNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '+' || c == '-';
}

}  // namespace

std::string joinedWords(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& w : words) text += (text.empty() ? "" : " ") + w;
  return text;
}

std::string shellQuoted(const std::string& text) {
  if (!text.empty() &&
      text.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") ==
          std::string::npos)
    return text;
  const bool control = std::any_of(text.begin(), text.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) == 0x7f;
  });
  if (control) {
    // escapedForDisplay's escapes (\\, \n, \xHH) are bash's ANSI-C escapes; only the quote is left.
    std::string quoted = "$'";
    for (const char c : escapedForDisplay(text)) quoted += c == '\'' ? std::string("\\'") : std::string(1, c);
    return quoted + "'";
  }
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

bool isSlurmTime(const std::string& t) {
  if (t == "UNLIMITED" || t == "INFINITE") return true;
  std::string rest = t;
  if (const std::size_t dash = t.find('-'); dash != std::string::npos) {
    const std::string days = t.substr(0, dash);
    if (days.empty() || days.find_first_not_of("0123456789") != std::string::npos) return false;
    rest = t.substr(dash + 1);
  }
  int fields = 0;
  std::size_t start = 0;
  while (true) {
    const std::size_t colon = rest.find(':', start);
    const std::string field = rest.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (field.empty() || field.size() > 3 || field.find_first_not_of("0123456789") != std::string::npos) return false;
    ++fields;
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return fields <= 3;
}

bool isSlurmName(const std::string& text, bool list) {
  if (text.empty() || text.front() == '-') return false;
  for (const char c : text)
    if (!isSlurmNameChar(c) && !(list && c == ',')) return false;
  return text.back() != ',' && text.find(",,") == std::string::npos;
}

std::string slurmNameFrom(const std::string& text) {
  std::string name;
  for (const char c : text) name += isSlurmNameChar(c) ? c : '_';
  if (name.empty() || name.front() == '-') name = "dispar_" + name;
  return name;
}

std::string formatBatchScript(const MapRecord& record, const BatchSettings& batch, const std::string& hostfile,
                              const std::string& program) {
  std::map<std::string, int> gpusOnHost;
  std::map<std::string, std::set<int>> devices;
  std::vector<std::string> hosts;
  for (const RankRecord& k : record.ranks) {
    if (std::find(hosts.begin(), hosts.end(), k.host) == hosts.end()) hosts.push_back(k.host);
    if (k.device) devices[k.host].insert(*k.device);
  }
  const int ranks = lang::rankCountOf(record.ranks);
  const std::string instances =
      ranks == static_cast<int>(record.ranks.size()) ? "" : " (" + std::to_string(record.ranks.size()) + " instances)";
  std::sort(hosts.begin(), hosts.end());
  std::string nodeList, gpuUse;
  for (const std::string& h : hosts) {
    nodeList += (nodeList.empty() ? "" : ",") + h;
    if (devices.count(h)) gpuUse += (gpuUse.empty() ? "" : ", ") + h + ": " + std::to_string(devices[h].size());
  }
  const std::string absolute = std::filesystem::absolute(program).lexically_normal().string();
  const std::string absoluteHostfile = std::filesystem::absolute(hostfile).lexically_normal().string();
  // Paths in the comment header are escaped: a newline in one would end the comment and make the rest of
  // the path a command (and end sbatch's reading of #SBATCH lines).
  std::string s = "#!/bin/bash\n";
  s += "# Written by `streammap sbatch " + escapedForDisplay(record.rtgPath) + "`: the mapping " +
       escapedForDisplay(siblingPath(hostfile, ".map.json")) + " places " + std::to_string(ranks) + " ranks" +
       instances + " on " + std::to_string(hosts.size()) + " node" + (hosts.size() == 1 ? "" : "s") +
       " (GPUs used: " + (gpuUse.empty() ? "none" : gpuUse) + ").\n";
  s += "# Whole nodes: the mapping counts on every core and GPU of its nodes, and a job cannot ask GPUs of\n";
  s += "# only some of its nodes. Submit with: sbatch " + escapedForDisplay(shellQuoted(batch.script)) + "\n";
  s += "#SBATCH --job-name=" + batch.jobName + "\n";
  s += "#SBATCH --nodes=" + std::to_string(hosts.size()) + "\n";
  s += "#SBATCH --nodelist=" + nodeList + "\n";
  s += "#SBATCH --ntasks=" + std::to_string(ranks) + "\n";
  s += "#SBATCH --exclusive\n";
  if (!batch.time.empty()) s += "#SBATCH --time=" + batch.time + "\n";
  if (!batch.partition.empty()) s += "#SBATCH --partition=" + batch.partition + "\n";
  s += "set -eu\n";
  s += "export SLURM_HOSTFILE=" + shellQuoted(absoluteHostfile) + "\n";
  std::vector<std::string> srun = srunArguments(record);
  s += "exec " + joinedWords(srun) + " " + shellQuoted(absolute) + " \"$@\"\n";
  return s;
}

std::vector<std::string> srunArguments(const MapRecord& record) {
  std::vector<std::string> words = {"srun", record.mpi == "openmpi" ? "--mpi=pmix" : "--mpi=pmi2", "-n",
                                    std::to_string(lang::rankCountOf(record.ranks)), "--distribution=arbitrary"};
  if (lang::rankCountOf(record.ranks) < static_cast<int>(record.ranks.size())) words.push_back("--cpu-bind=none");
  std::map<std::string, int> ranksOnHost;
  for (const std::string& host : hostsOfRanks(record)) ++ranksOnHost[host];
  for (const NodeInfo& n : record.cluster.nodes)
    if (ranksOnHost[n.host] > n.cores) {
      words.push_back("--overcommit");
      break;
    }
  return words;
}

}  // namespace dispar::streammap
