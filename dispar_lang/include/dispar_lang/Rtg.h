// The Requirement Topology Graph file (app.rtg.json): the contract between disparcc and streammap.
// Format documented in docs/language.md ("The RTG file").
#ifndef DISPAR_LANG_RTG_H
#define DISPAR_LANG_RTG_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dispar::lang {

inline constexpr const char* kRtgFormat = "dispar-rtg";
inline constexpr int kRtgVersion = 1;

/// CO: CPU only. CG: CPU + GPU (launches kernels or calls a GPU library).
enum class Requirement { CO, CG };

const char* requirementName(Requirement r);  // "CO" / "CG"

/// Static features of a VNODE's code by name (docs/language.md, "Code features"), in name order so that
/// files are deterministic. Values are non-negative counts or weights.
using CodeFeatures = std::map<std::string, double>;

struct RtgVertex {
  int id = 0;  // equals rank
  int rank = 0;
  std::string vnode;   // "stage[3]" for a member of a VNODE_ARRAY
  std::string family;  // that VNODE_ARRAY's name ("stage"); empty for a VNODE
  int member = -1;     // the member's index in its family
  int replica = 0;
  int replicas = 1;
  Requirement type = Requirement::CO;
  double cost = 1.0;
  bool costDeclared = true;             // from a cost(W) clause; false: the default 1 (written "cost_declared": false)
  std::optional<std::uint64_t> memory;  // bytes one instance needs on its device
  std::string location;                 // "app.dsp:12:1"
  bool usesNodeCores = false;           // "node_cores": shares its loops with its node's CPU cores (split_for)
  std::string fingerprint;              // hash of the VNODE's code (docs/language.md); empty when unknown
  CodeFeatures features;                // static features of the VNODE's code; empty when unknown
};

struct RtgEdge {
  int from = 0;
  int to = 0;
  std::string pipe;
  std::string element;
  std::uint64_t elementBytes = 0;
  std::optional<std::uint64_t> volume;  // bytes per message, from communication(...) volume(...)
  std::uint64_t initial = 0;            // elements the pipe starts with (communication(...) initial(N))
  bool mayDealOnDemand = false;         // "may_deal_on_demand": the mapping may deal its pipe on demand
                                        // (lang::mayDealOnDemand; written only when set)
};

struct Rtg {
  std::string program;
  std::vector<std::string> cudaArchs;  // e.g. "sm_80", "sm_90", "compute_90"
  std::string mpi = "mpich";           // the MPI the program was built for: "mpich" / "openmpi" / "smpi" (SimGrid)
  std::vector<RtgVertex> vertices;
  std::vector<RtgEdge> edges;
};

/// Serialises deterministically (vertices by id, edges in order), two-space indented, newline at end.
std::string writeRtgJson(const Rtg& rtg);

/// Parses and validates an RTG: format and version, ids equal to ranks and dense from 0, edges naming
/// existing vertices. On failure returns false and sets `error` to a message naming the field.
bool parseRtgJson(const std::string& text, Rtg& out, std::string& error);

}  // namespace dispar::lang

#endif
