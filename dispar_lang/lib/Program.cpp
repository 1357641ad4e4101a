#include "dispar_lang/Program.h"

#include <numeric>

namespace dispar::lang {

std::string SourceLocation::str() const { return file + ":" + std::to_string(line) + ":" + std::to_string(column); }

int ProgramModel::findVnode(const std::string& vnodeName) const {
  for (std::size_t i = 0; i < vnodes.size(); ++i)
    if (vnodes[i].name == vnodeName) return static_cast<int>(i);
  return -1;
}

int ProgramModel::findPipe(const std::string& pipeName) const {
  for (std::size_t i = 0; i < pipes.size(); ++i)
    if (pipes[i].name == pipeName) return static_cast<int>(i);
  return -1;
}

int ProgramModel::firstRank(int vnode) const {
  int rank = 0;
  for (int i = 0; i < vnode; ++i) rank += vnodes[static_cast<std::size_t>(i)].replicas;
  return rank;
}

int ProgramModel::rankCount() const { return firstRank(static_cast<int>(vnodes.size())); }

std::vector<int> readerReplicaCounts(const ProgramModel& program, const PipeModel& pipe) {
  std::vector<int> counts;
  for (int reader : pipe.readers) counts.push_back(program.vnodes[static_cast<std::size_t>(reader)].replicas);
  return counts;
}

LogicalStream logicalStream(const ProgramModel& program, const PipeModel& pipe) {
  const std::vector<int> readers = readerReplicaCounts(program, pipe);
  return LogicalStream(program.vnodes[static_cast<std::size_t>(pipe.writer)].replicas,
                       std::accumulate(readers.begin(), readers.end(), 0), pipe.split, pipe.splitWeights,
                       pipe.joinWeights);
}

Rtg buildRtg(const ProgramModel& program, const std::vector<std::string>& cudaArchs) {
  Rtg rtg;
  rtg.program = program.name;
  rtg.cudaArchs = cudaArchs;
  for (std::size_t v = 0; v < program.vnodes.size(); ++v) {
    const VnodeModel& vnode = program.vnodes[v];
    int first = program.firstRank(static_cast<int>(v));
    for (int r = 0; r < vnode.replicas; ++r) {
      RtgVertex vertex;
      vertex.id = vertex.rank = first + r;
      vertex.vnode = vnode.name;
      vertex.family = vnode.family;
      vertex.member = vnode.member;
      vertex.replica = r;
      vertex.replicas = vnode.replicas;
      vertex.type = vnode.requirement;
      vertex.cost = vnode.cost;
      vertex.costDeclared = vnode.costDeclared;
      vertex.memory = vnode.memoryBytes;
      vertex.location = vnode.location.str();
      vertex.usesNodeCores = vnode.usesNodeCores;
      vertex.fingerprint = vnode.fingerprint;
      vertex.features = vnode.features;
      rtg.vertices.push_back(vertex);
    }
  }
  for (const PipeModel& pipe : program.pipes) {
    if (pipe.writer < 0 || pipe.readers.empty()) continue;
    const int writerFirst = program.firstRank(pipe.writer);
    const LogicalStream stream = logicalStream(program, pipe);
    const std::vector<int> readers = readerReplicaCounts(program, pipe);
    const int kw = program.vnodes[static_cast<std::size_t>(pipe.writer)].replicas;
    const bool onDemand = mayDealOnDemand(pipe.split == SplitMode::RoundRobin, pipe.splitDeclared,
                                          static_cast<int>(pipe.readers.size()), readers.front(), pipe.initial);
    for (int w = 0; w < kw; ++w)
      for (int r : distinctInOrder(stream.writerPeers(w))) {
        const auto [which, replica] = readerOfReplica(readers, r);
        rtg.edges.push_back(RtgEdge{writerFirst + w, program.firstRank(pipe.readers[which]) + replica, pipe.name,
                                    pipe.elementType, pipe.elementBytes, pipe.volume,
                                    static_cast<std::uint64_t>(pipe.initial), onDemand});
      }
  }
  return rtg;
}

}  // namespace dispar::lang
