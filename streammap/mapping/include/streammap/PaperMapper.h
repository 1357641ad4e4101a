// The DISPAR paper's greedy mapper (background.md section 1), with every choice the paper leaves open
// fixed as documented in docs/streammap.md ("--algorithm paper").
#ifndef STREAMMAP_PAPER_MAPPER_H
#define STREAMMAP_PAPER_MAPPER_H

#include "streammap/Mapping.h"
#include "streammap/MappingProblem.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace dispar::streammap {

struct PaperOptions {
  /// Step 7's "random" vertex: without a seed, the lowest-ranked unassigned vertex; with one, a
  /// uniformly drawn unassigned vertex from a SplitMix64 stream seeded with it.
  std::optional<std::uint64_t> seed;
};

/// The resource tables: CRT (CPU-only nodes, total = cores) and GRT (GPU nodes, total = GPUs), each
/// most capable first (CRT by cores x CPU speed, GRT by GPUs x mean GPU speed, ties by host name).
struct ResourceTables {
  std::vector<int> crt;  // problem node indices
  std::vector<int> grt;
  std::vector<long> total;  // per problem node: its table's total
};
ResourceTables buildResourceTables(const MappingProblem& problem);

/// The start vertex: the first source (no incoming arc) in rank order; rank 0 when every vertex has
/// an incoming arc.
int paperStartVertex(const MappingProblem& problem);

MappingResult mapPaper(const MappingProblem& problem, const PaperOptions& options);

/// A small deterministic generator (SplitMix64): same stream on every platform and library.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  /// Uniform in [0, bound), bound > 0.
  std::uint64_t below(std::uint64_t bound);
  double unit();  // uniform in [0, 1)

 private:
  std::uint64_t state_;
};

}  // namespace dispar::streammap

#endif
