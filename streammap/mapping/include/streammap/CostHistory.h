// Measured costs (docs/streammap.md, "Measured costs"): run profiles turned into cost samples, and the
// robust per-VNODE estimates the mapper uses, by device class.
//
// A sample's unit is the cost model's: seconds per message on a speed-1.0 resource. An instance that
// computed c seconds in a run of N period messages (RunProfile::periodMessages) on a device of speed s
// did c / N seconds per message, i.e. work c / N * s; its VNODE's work per message is that times its
// replica count then (the replicas share it). A GPU measured on one model thus transfers to another
// through the speed estimate (GpuSpeed.h), and a CPU's through the nodes' cpu speeds.
#ifndef STREAMMAP_COST_HISTORY_H
#define STREAMMAP_COST_HISTORY_H

#include "dispar_lang/Rtg.h"
#include "dispar_lang/RunProfile.h"
#include "streammap/Cluster.h"
#include "streammap/ResourceDb.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace dispar::streammap {

/// "gpu" for an instance that ran on a GPU, "cpu" for one that ran on a CPU (its own or the host path).
const char* deviceClassOf(const lang::ProfiledInstance& instance);

/// Turns a profile into the samples `profile add` records: each instance's time per period message and
/// the speed of the device it ran on, looked up in `cluster` (its host's CPU speed, or the speed of its
/// host's GPU of that model); an instance whose host or GPU `cluster` does not know gets speed 1.0 and a
/// note. `rtg`, when given and built from the same code (fingerprints), gives each VNODE's code features,
/// to which the run's message sizes (messageSizes, below) are added.
/// Fails (false, `error`) on an incomplete profile: a failed run's times are not the program's.
bool samplesFromProfile(const lang::RunProfile& profile, const std::string& source, const Cluster& cluster,
                        const lang::Rtg* rtg, ProfileRunRecord& out, std::vector<std::string>& notes,
                        std::string& error);

/// Records `profile` (read from `source`) in `db`'s performance history as samplesFromProfile turns it
/// into samples: `profile add`, and `run` after every run it profiled. `run` and `runId` say what was
/// recorded. Fails (false, `error`) as samplesFromProfile does, or when the database refuses.
bool recordRunProfile(const lang::RunProfile& profile, const std::string& source, const Cluster& cluster,
                      const lang::Rtg* rtg, ResourceDb& db, ProfileRunRecord& run, std::int64_t& runId,
                      std::vector<std::string>& notes, std::string& error);

/// Run features of a VNODE, recorded and predicted beside its code features (docs/streammap.md,
/// "Predicted costs"): the bytes per message of the pipes it reads, and of those it writes, as a run
/// measured them, each summed over the distinct pipes. They say how much data its code works on per
/// message, which the code's static features do not know (a vector's length, a launch's grid).
inline constexpr const char* kMessageBytesIn = "message_bytes_in";
inline constexpr const char* kMessageBytesOut = "message_bytes_out";
/// Both run features of every VNODE of `rtg` (all its replicas' vertices) whose every edge
/// `measuredBytes` knows (per edge index of `rtg`: its pipe's measured bytes per message), by VNODE.
std::map<std::string, lang::CodeFeatures>
messageSizes(const lang::Rtg& rtg, const std::function<std::optional<double>(std::size_t edge)>& measuredBytes);

/// A robust estimate over repeated measurements: the median after dropping the values further than
/// 3 scaled median absolute deviations (1.4826 MAD, the normal distribution's sigma) from the median,
/// but never those within 15% of it (3 x 5% of the median, a floor on the deviation).
struct RobustEstimate {
  double value = 0;   // median of the values kept
  int count = 0;      // values given
  int used = 0;       // values kept
  double spread = 0;  // scaled MAD over the value (0 when every kept value agrees)
};
RobustEstimate robustEstimate(std::vector<double> values);

/// The longest a profiled time may be: a year. A time beyond it (1e308 s) is not a measurement and would
/// overflow every sum the history and the cost model form from it: `profile add` refuses it, and a
/// history row beyond it (recorded before, or by hand) is ignored.
inline constexpr double kLongestProfiledSeconds = 365.0 * 24 * 3600;

/// The history of measured costs, by VNODE code and device class.
class CostHistory {
 public:
  struct Key {
    std::string program, vnode, fingerprint, deviceClass;
    bool operator<(const Key& other) const {
      return std::tie(program, vnode, fingerprint, deviceClass) <
             std::tie(other.program, other.vnode, other.fingerprint, other.deviceClass);
    }
  };
  struct Entry {
    Key key;
    RobustEstimate work;              // the VNODE's work per message (all its replicas)
    int runs = 0;                     // distinct runs sampled
    std::vector<std::string> models;  // device models sampled, sorted
    lang::CodeFeatures features;      // the code's features, when recorded
  };

  CostHistory() = default;
  CostHistory(const std::vector<CostSample>& samples, const std::vector<PipeSample>& pipes);

  /// The estimate for a VNODE's code on a device class, or null when never measured there.
  const Entry* find(const std::string& program, const std::string& vnode, const std::string& fingerprint,
                    const std::string& deviceClass) const;
  /// Fingerprints measured for `vnode` of `program` other than `fingerprint` (its code changed since).
  std::vector<std::string> otherFingerprints(const std::string& program, const std::string& vnode,
                                             const std::string& fingerprint) const;
  /// A pipe's measured bytes per message (robust over runs), or nullopt.
  std::optional<RobustEstimate> bytesPerMessage(const std::string& program, const std::string& pipe) const;

  const std::vector<Entry>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }
  /// Rows the history holds but cannot use (a time per message that is not a positive time of at most
  /// kLongestProfiledSeconds, which an older version or a hand edit may have stored): each left out, named
  /// by its run.
  const std::vector<std::string>& ignored() const { return ignored_; }

 private:
  std::vector<Entry> entries_;  // in key order
  std::vector<std::string> ignored_;
  std::map<Key, std::size_t> index_;
  std::map<std::pair<std::string, std::string>, RobustEstimate> pipeBytes_;
};

}  // namespace dispar::streammap

#endif
