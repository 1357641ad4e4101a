// Recording probes in the resource database: one node (`streammap --discover`) or, collectively over
// MPI, every rank's node (`mpiexec -f hosts -ppn 1 streammap --discover --cluster`).
#ifndef STREAMMAP_DISCOVERY_H
#define STREAMMAP_DISCOVERY_H

#include "streammap/NodeProbe.h"

#include <string>
#include <vector>

namespace dispar::streammap {

/// Probes this node and records it. Prints the probe's warnings and a one-line summary; returns the
/// exit status. Does not touch MPI.
int discoverLocalNode(const std::string& dbPath, const ProbeOptions& options);

/// The host name MPI gives this rank: $MPIR_CVAR_CH3_INTERFACE_HOSTNAME when set (MPICH's hydra sets it
/// to the machinefile's name, which keeps made-up names apart under the fork launcher), else
/// MPI_Get_processor_name. MPI must be initialized.
std::string mpiRankHostName();

/// Collective over MPI_COMM_WORLD (MPI initialized by the caller): every rank probes its node, rank 0
/// gathers the probes (MPI_Gather of the sizes, MPI_Gatherv of the JSON), records them in one
/// transaction and marks recorded nodes that did not answer as down. Returns the same exit status on
/// every rank.
int discoverClusterCollective(const std::string& dbPath, const ProbeOptions& options);

/// One-line summary of a node ("node1: 2 sockets, 16 cores, 32 threads, 64.0 GiB, 2 NUMA nodes,
/// 2 GPUs (2x Tesla K20 cc 3.5)").
std::string summarizeNode(const NodeInfo& node);

}  // namespace dispar::streammap

#endif
