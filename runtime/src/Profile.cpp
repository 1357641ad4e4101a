#include "Profile.h"

#include "MpiCheck.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <unistd.h>

namespace dispar::rt {

double threadCpuSeconds() {
  timespec now{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now) != 0) return 0;
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

std::string profilePath() {
  const char* path = std::getenv("DISPAR_PROFILE");
  return path != nullptr ? path : "";
}

namespace {

nlohmann::ordered_json instanceJson(const InstanceProfile& instance) {
  return {{"rank", instance.rank},
          {"vnode", instance.vnode},
          {"replica", instance.replica},
          {"host", instance.host},
          {"device", instance.device},
          {"compute_s", instance.computeSeconds},
          {"read_wait_s", instance.readWaitSeconds},
          {"write_wait_s", instance.writeWaitSeconds},
          {"cpu_s", instance.cpuSeconds}};
}

nlohmann::ordered_json splitSiteJson(const SplitSiteProfile& site) {
  return {{"rank", site.rank}, {"site", site.site}, {"gpu_rate", site.gpuRate}, {"cpu_thread_rate", site.cpuThreadRate}};
}

}  // namespace

std::string profileJson(const ProgramSpec& program, const std::vector<InstanceProfile>& instances,
                        const std::vector<PipeTraffic>& pipes, const std::vector<SplitSiteProfile>& splitSites,
                        const std::string& failure) {
  nlohmann::ordered_json doc = {{"format", "dispar-profile"}, {"version", 1}, {"program", program.program}};
  doc["complete"] = failure.empty();
  if (!failure.empty()) doc["failure"] = failure;
  nlohmann::ordered_json lines = nlohmann::ordered_json::array();
  for (const InstanceProfile& instance : instances) lines.push_back(instanceJson(instance));
  doc["instances"] = std::move(lines);
  nlohmann::ordered_json traffic = nlohmann::ordered_json::array();
  for (int p = 0; p < program.pipeCount && static_cast<std::size_t>(p) < pipes.size(); ++p)
    traffic.push_back({{"pipe", program.pipes[p].name},
                       {"messages", pipes[static_cast<std::size_t>(p)].messages},
                       {"bytes", pipes[static_cast<std::size_t>(p)].bytes}});
  doc["pipes"] = std::move(traffic);
  doc["kernels"] = nlohmann::ordered_json::array();  // launch sites are not recorded yet (docs/runtime.md)
  nlohmann::ordered_json sites = nlohmann::ordered_json::array();
  for (const SplitSiteProfile& site : splitSites) sites.push_back(splitSiteJson(site));
  doc["split_sites"] = std::move(sites);
  return doc.dump(2) + "\n";
}

bool writeProfileFile(const std::string& path, const std::string& text, std::string& error) {
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      error = "cannot write the profile '" + temporary + "'";
      std::remove(temporary.c_str());
      return false;
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    error = "cannot rename the profile to '" + path + "'";
    std::remove(temporary.c_str());
    return false;
  }
  return true;
}

bool gatherProfile(const std::string& path, const ProgramSpec& program, const std::vector<InstanceProfile>& mine,
                   const std::vector<PipeTraffic>& myPipes, const std::vector<SplitSiteProfile>& mySplitSites, int rank,
                   std::string& error) {
  // Each rank's lines as JSON text; rank 0 parses them back into one list.
  nlohmann::ordered_json lines = nlohmann::ordered_json::array();
  for (const InstanceProfile& instance : mine) lines.push_back(instanceJson(instance));
  nlohmann::ordered_json sites = nlohmann::ordered_json::array();
  for (const SplitSiteProfile& site : mySplitSites) sites.push_back(splitSiteJson(site));
  const std::string text = nlohmann::ordered_json{{"instances", lines}, {"split_sites", sites}}.dump();
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int length = static_cast<int>(text.size());
  std::vector<int> lengths(rank == 0 ? static_cast<std::size_t>(size) : 0);
  DISPAR_MPI(MPI_Gather, &length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(lengths.size());
  std::string all;
  if (rank == 0) {
    int total = 0;
    for (std::size_t r = 0; r < lengths.size(); ++r) offsets[r] = total, total += lengths[r];
    all.resize(static_cast<std::size_t>(total));
  }
  DISPAR_MPI(MPI_Gatherv, text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0,
             MPI_COMM_WORLD);
  std::vector<std::uint64_t> counts;
  for (const PipeTraffic& pipe : myPipes) counts.insert(counts.end(), {pipe.messages, pipe.bytes});
  std::vector<std::uint64_t> sums(counts.size());
  DISPAR_MPI(MPI_Reduce, counts.data(), sums.data(), static_cast<int>(counts.size()), MPI_UINT64_T, MPI_SUM, 0,
             MPI_COMM_WORLD);
  if (rank != 0) return true;

  std::vector<InstanceProfile> instances;
  std::vector<SplitSiteProfile> splitSites;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    const nlohmann::json part = nlohmann::json::parse(all.substr(static_cast<std::size_t>(offsets[r]),
                                                                 static_cast<std::size_t>(lengths[r])));
    for (const nlohmann::json& site : part.at("split_sites"))
      splitSites.push_back(SplitSiteProfile{site.at("rank").get<int>(), site.at("site").get<std::string>(),
                                            site.at("gpu_rate").get<double>(), site.at("cpu_thread_rate").get<double>()});
    for (const nlohmann::json& line : part.at("instances"))
      instances.push_back(InstanceProfile{line.at("rank").get<int>(), line.at("vnode").get<std::string>(),
                                          line.at("replica").get<int>(), line.at("host").get<std::string>(),
                                          line.at("device").get<std::string>(), line.at("compute_s").get<double>(),
                                          line.at("read_wait_s").get<double>(), line.at("write_wait_s").get<double>(),
                                          line.at("cpu_s").get<double>()});
  }
  std::vector<PipeTraffic> pipes(myPipes.size());
  for (std::size_t p = 0; p < pipes.size(); ++p) pipes[p] = {sums[2 * p], sums[2 * p + 1]};
  return writeProfileFile(path, profileJson(program, instances, pipes, splitSites, ""), error);
}

}  // namespace dispar::rt
