// Slurm as a source of resources (docs/streammap.md, "Slurm"): the nodes Slurm knows (`sinfo --json`, or
// `scontrol show node -o` where JSON output is missing), and the allocation a job runs in
// (SLURM_JOB_NODELIST, SLURM_JOB_CPUS_PER_NODE, the GPUs of `scontrol show job -d`).
//
// The parsers take text so that they are tested on the output of every Slurm version we know; the query
// functions run the real commands.
#ifndef STREAMMAP_SLURM_H
#define STREAMMAP_SLURM_H

#include "streammap/Cluster.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dispar::streammap::slurm {

/// The GPUs a gres string names ("gpu:a100:2(S:0-1),gpu:v100:1", "gpu:4", "gpu:a100:2(IDX:0,3)"). Other
/// gres ("mps:100", "nic:1") are ignored. With IDX the GPUs get those indices, else 0..n-1. Known models
/// (kGpuModels) get their compute capability, multiprocessors and clock; others stay unknown (0).
bool parseGres(const std::string& gres, std::vector<GpuInfo>& out, std::string& error);

/// The DISPAR status of a Slurm node state: base state and flags as `sinfo --json` (22.05: "idle" with
/// flags ["DRAIN"]; 23.02+: ["IDLE", "DRAIN"]) or scontrol ("IDLE+DRAIN", "DOWN*") give them.
/// idle/mixed/allocated/completing/planned -> up; any drain flag -> drained; down, not responding
/// ("*"), fail, future, unknown, powered down, inval -> down.
NodeStatus statusOfState(const std::vector<std::string>& words);

/// Nodes of `sinfo --json` (Slurm 22.05 and later formats). Source Import; memory from real_memory.
bool parseSinfoJson(const std::string& text, std::vector<NodeInfo>& out, std::string& error);
/// Nodes of `scontrol show node -o` (one node per line, Key=Value words).
bool parseScontrolNodes(const std::string& text, std::vector<NodeInfo>& out, std::string& error);

/// Expands a Slurm host list ("gpu[1-2,05],cpu1", "rack[1-2]-n[01-02]") in Slurm's order.
bool expandHostList(const std::string& list, std::vector<std::string>& out, std::string& error);
/// Expands SLURM_JOB_CPUS_PER_NODE ("4(x2),2" -> 4,4,2).
bool expandCountList(const std::string& list, std::vector<int>& out, std::string& error);

struct AllocatedNode {
  std::string host;
  int cpus = 0;
  std::optional<std::vector<GpuInfo>> gpus;  // unset: Slurm did not say
};

struct Allocation {
  std::string jobId;
  std::vector<AllocatedNode> nodes;  // in SLURM_JOB_NODELIST order
  std::vector<std::string> notes;    // how the GPUs were found, what was assumed
};

/// The per-node GRES of `scontrol show job -d` ("Nodes=gpu[1-2] CPU_IDs=0-3 Mem=0 GRES=gpu:a100:2(IDX:0-1)")
/// applied to `allocation`: nodes without a GRES entry get no GPU.
bool applyJobDetails(const std::string& text, Allocation& allocation, std::string& error);

/// Runs a command and returns its standard output; a non-zero exit is an error quoting its stderr.
using CommandRunner =
    std::function<bool(const std::vector<std::string>& argv, std::string& output, std::string& error)>;
bool runCommand(const std::vector<std::string>& argv, std::string& output, std::string& error);

/// The nodes Slurm knows now: `sinfo --json`, else `scontrol show node -o` (`how` says which).
bool queryNodes(std::vector<NodeInfo>& out, std::string& how, std::string& error,
                const CommandRunner& run = runCommand);

/// The allocation this process runs in, from the environment (`getenv`); nullopt outside one
/// (SLURM_JOB_ID unset). GPUs per node from `scontrol show job -d`, else SLURM_GPUS_ON_NODE for every
/// node (with a note), else none (with a note).
bool currentAllocation(std::optional<Allocation>& out, std::string& error, const CommandRunner& run = runCommand,
                       const std::function<const char*(const char*)>& getenv = nullptr);

/// Merges what Slurm says about a node with what the database holds for it (`stored`, from probes or an
/// earlier import): probe details (CPU topology, caches, NUMA, GPU models and compute capability) are kept,
/// Slurm's status wins, and Slurm's GPU count is what the scheduler hands out.
NodeInfo mergeNode(const NodeInfo* stored, const NodeInfo& fromSlurm);

/// Restricts `cluster` to the allocation's nodes: each allocated node usable (Slurm just gave it to the
/// job) with its allocated CPUs and GPUs; nodes the cluster does not describe are taken as Slurm
/// describes them. `notes` says what was done, one line per node.
void restrictToAllocation(Cluster& cluster, const Allocation& allocation, std::vector<std::string>& notes);

}  // namespace dispar::streammap::slurm

#endif
