#include "Program.h"

#include "dispar_lang/LogicalStream.h"

#include <cerrno>
#include <climits>
#include <cstdlib>

namespace dispar::rt {
namespace {

std::string quoted(const char* text) { return std::string("'") + (text ? text : "(null)") + "'"; }

lang::SplitMode splitOf(const PipeSpec& pipe) {
  return pipe.split == SplitMode::Duplicate ? lang::SplitMode::Duplicate : lang::SplitMode::RoundRobin;
}

std::vector<int> ranksOf(const VnodeSpec& vnode, const std::vector<int>& replicas) {
  std::vector<int> ranks;
  for (int replica : replicas) ranks.push_back(vnode.firstRank + replica);
  return ranks;
}

}  // namespace

std::string validateProgram(const ProgramSpec& program) {
  if (program.vnodeCount <= 0 || program.vnodes == nullptr) return "program has no vnodes";
  if (program.pipeCount < 0 || (program.pipeCount > 0 && program.pipes == nullptr))
    return "program's pipe table is missing";
  int nextRank = 0;
  for (int v = 0; v < program.vnodeCount; ++v) {
    const VnodeSpec& vnode = program.vnodes[v];
    if (vnode.name == nullptr) return "vnode " + std::to_string(v) + " has no name";
    if (vnode.replicas < 1)
      return "vnode " + quoted(vnode.name) + " has " + std::to_string(vnode.replicas) + " replicas (at least 1 needed)";
    // Ranks are laid out VNODE after VNODE, replicas consecutive.
    if (vnode.firstRank != nextRank)
      return "vnode " + quoted(vnode.name) + " starts at rank " + std::to_string(vnode.firstRank) + " but rank " +
             std::to_string(nextRank) + " is next";
    nextRank += vnode.replicas;
  }
  if (program.rankCount != nextRank)
    return "rank count " + std::to_string(program.rankCount) + " differs from the vnodes' replica total " +
           std::to_string(nextRank);
  for (int p = 0; p < program.pipeCount; ++p) {
    const PipeSpec& pipe = program.pipes[p];
    const std::string name = pipe.name ? quoted(pipe.name) : std::to_string(p);
    auto validVnode = [&](int v) { return v >= 0 && v < program.vnodeCount; };
    if (!validVnode(pipe.writerVnode) || !validVnode(pipe.readerVnode))
      return "pipe " + name + " names a vnode outside 0.." + std::to_string(program.vnodeCount - 1);
    if (pipe.writerVnode == pipe.readerVnode) return "pipe " + name + " has the same vnode at both ends";
    if (pipe.elementBytes == 0) return "pipe " + name + " has zero-byte elements";
    if (pipe.split != SplitMode::RoundRobin && pipe.split != SplitMode::Duplicate)
      return "pipe " + name + " has an unknown split mode";
  }
  return {};
}

std::string rankCountMismatch(const ProgramSpec& program, int launchedRanks) {
  std::string message = std::string(program.program ? program.program : "program") + " was launched with " +
                        std::to_string(launchedRanks) + (launchedRanks == 1 ? " rank" : " ranks") + " but needs " +
                        std::to_string(program.rankCount) + " (one per VNODE instance: ";
  for (int v = 0; v < program.vnodeCount; ++v) {
    if (v != 0) message += ", ";
    message += std::string(program.vnodes[v].name) + " " + std::to_string(program.vnodes[v].replicas);
  }
  return message + ")";
}

std::optional<InstanceId> instanceOfRank(const ProgramSpec& program, int rank) {
  for (int v = 0; v < program.vnodeCount; ++v) {
    const VnodeSpec& vnode = program.vnodes[v];
    if (rank >= vnode.firstRank && rank < vnode.firstRank + vnode.replicas)
      return InstanceId{v, rank - vnode.firstRank};
  }
  return std::nullopt;
}

std::vector<PortPlan> planPorts(const ProgramSpec& program, InstanceId instance) {
  std::vector<PortPlan> plans;
  for (int p = 0; p < program.pipeCount; ++p) {
    const PipeSpec& pipe = program.pipes[p];
    const VnodeSpec& writer = program.vnodes[pipe.writerVnode];
    const VnodeSpec& reader = program.vnodes[pipe.readerVnode];
    if (pipe.writerVnode == instance.vnode) {
      plans.push_back(
          {p, PortRole::Writer,
           ranksOf(reader, lang::writerPeers(instance.replica, writer.replicas, reader.replicas, splitOf(pipe)))});
    } else if (pipe.readerVnode == instance.vnode) {
      plans.push_back(
          {p, PortRole::Reader,
           ranksOf(writer, lang::readerPeers(instance.replica, writer.replicas, reader.replicas, splitOf(pipe)))});
    }
  }
  return plans;
}

std::optional<unsigned> parseWindowSetting(const char* text, std::string& error) {
  if (text == nullptr || *text == '\0') return kDefaultPipeWindow;
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < 1 || value > INT_MAX) {
    error = std::string("DISPAR_PIPE_WINDOW must be a positive integer, got '") + text + "'";
    return std::nullopt;
  }
  return static_cast<unsigned>(value);
}

}  // namespace dispar::rt
