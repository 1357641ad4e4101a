// The batch script `streammap sbatch` writes, and srun's words for a mapping (`streammap run --launcher
// slurm` uses them too): every value written into the script is validated or quoted, so that no value
// adds a line, a command or an option (issue 36; fuzz/sbatch_fuzzer.cpp checks the property).
#ifndef STREAMMAP_BATCH_SCRIPT_H
#define STREAMMAP_BATCH_SCRIPT_H

#include "streammap/MapFile.h"

#include <string>
#include <vector>

namespace dispar::streammap {

/// `text` quoted for bash (the scripts sbatch writes start #!/bin/bash): as is when it is plain, in single
/// quotes otherwise, and in ANSI-C quotes ($'...', control characters as \xHH) when it holds a control
/// character, so that a quoted value never spans lines.
std::string shellQuoted(const std::string& text);

/// Slurm's time formats: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS, or UNLIMITED.
bool isSlurmTime(const std::string& t);

/// What an `#SBATCH` value may hold (sbatch splits its lines like a shell, and a newline would end the
/// directive): letters, digits, '.', '_', '+' and '-', not starting with '-'; a partition list (`list`)
/// also ',' between names. Anything else cannot be written into the script as given, and is refused.
bool isSlurmName(const std::string& text, bool list);

/// A default job name from a program's file name: what isSlurmName refuses becomes '_'.
std::string slurmNameFrom(const std::string& text);

/// sbatch's settings: the script's path, and the #SBATCH values (empty: not written). `time`, `partition`
/// and `jobName` must have passed isSlurmTime / isSlurmName.
struct BatchSettings {
  std::string script, time, partition, jobName;
};

/// The batch script for `record`: whole nodes (the mapping counts on every core and GPU of its nodes,
/// and a Slurm 22.05 job cannot ask GPUs of only some of its nodes), the ranks placed by SLURM_HOSTFILE
/// (`hostfile`), running `program`.
std::string formatBatchScript(const MapRecord& record, const BatchSettings& batch, const std::string& hostfile,
                              const std::string& program);

/// `words` joined by single spaces (a command as printed; its words already quoted where they need it).
std::string joinedWords(const std::vector<std::string>& words);

/// srun's words for running the mapped ranks (SLURM_HOSTFILE names each rank's node): the program's
/// MPI's process-management interface (MPICH: PMI-2, Open MPI: PMIx), the rank count (MPI ranks, not
/// instances), the hostfile's order; --overcommit where the mapping puts more ranks on a node than it has
/// cores (srun refuses that otherwise); --cpu-bind=none where a rank runs several instances, whose
/// threads share the node's cores (task binding would pin each rank to one CPU).
std::vector<std::string> srunArguments(const MapRecord& record);

}  // namespace dispar::streammap

#endif
