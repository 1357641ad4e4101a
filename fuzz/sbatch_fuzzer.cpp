// Fuzzes the batch-script writer (`streammap sbatch`): the input is split at NUL bytes into the values a
// user or a file gives it (RTG path, script path, program path, hostfile path, --partition, --job-name,
// --time, then host names). Whatever the values, a value the checks accept is written so that the script
// holds the intended lines only: the comment header, exactly the #SBATCH options asked for (each once,
// with its value as given), `set -eu`, the hostfile export and the srun line, and no control character
// but the line ends. (CommandTest's property test also reads the quoted words back with bash.)
#include "streammap/BatchScript.h"
#include "streammap/Cluster.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

[[noreturn]] void failWith(const char* what, const std::string& script) {
  std::fprintf(stderr, "%s\n---\n%s---\n", what, script.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dispar::streammap;
  std::vector<std::string> fields(1);
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0)
      fields.emplace_back();
    else
      fields.back() += static_cast<char>(data[i]);
  }
  fields.resize(std::max<std::size_t>(fields.size(), 8));
  MapRecord record;
  record.rtgPath = fields[0];
  BatchSettings batch;
  batch.script = fields[1];
  const std::string program = fields[2].empty() ? "app" : fields[2];
  const std::string hostfile = fields[3].empty() ? "app.slurm-hostfile" : fields[3];
  batch.partition = fields[4];
  batch.jobName = fields[5].empty() ? slurmNameFrom(program) : fields[5];
  batch.time = fields[6];
  // What sbatch refuses never reaches the writer.
  if (!isSlurmName(batch.jobName, false)) return 0;
  if (!batch.partition.empty() && !isSlurmName(batch.partition, true)) return 0;
  if (!batch.time.empty() && !isSlurmTime(batch.time)) return 0;
  for (std::size_t i = 7; i < fields.size() && record.ranks.size() < 64; ++i) {
    std::string why;
    if (!checkHostName(fields[i], why)) continue;  // the host-name rule stands before every launcher file
    RankRecord rank;
    rank.rank = static_cast<int>(record.ranks.size());
    rank.host = fields[i];
    record.ranks.push_back(rank);
    NodeInfo node;
    node.host = fields[i];
    record.cluster.nodes.push_back(node);
  }
  if (record.ranks.empty()) return 0;

  const std::string script = formatBatchScript(record, batch, hostfile, program);
  for (const char c : script)
    if (static_cast<unsigned char>(c) < 0x20 && c != '\n') failWith("a control character in the script", script);
  std::map<std::string, std::string> options;
  std::istringstream lines(script);
  std::vector<std::string> commands;
  int lineNumber = 0;
  for (std::string line; std::getline(lines, line); ++lineNumber) {
    if (lineNumber == 0) {
      if (line != "#!/bin/bash") failWith("no #!/bin/bash first", script);
    } else if (line.rfind("#SBATCH ", 0) == 0) {
      const std::size_t equals = line.find('=');
      const std::string option = line.substr(8, equals == std::string::npos ? std::string::npos : equals - 8);
      if (!options.emplace(option, equals == std::string::npos ? "" : line.substr(equals + 1)).second)
        failWith("an #SBATCH option twice", script);
    } else if (line.rfind("# ", 0) == 0) {
      if (!commands.empty()) failWith("a comment after the commands", script);
    } else {
      commands.push_back(line);
    }
  }
  std::map<std::string, std::string> expected = {{"--job-name", batch.jobName}, {"--exclusive", ""}};
  if (!batch.time.empty()) expected["--time"] = batch.time;
  if (!batch.partition.empty()) expected["--partition"] = batch.partition;
  for (const auto& [option, value] : expected) {
    auto it = options.find(option);
    if (it == options.end() || it->second != value) failWith("an #SBATCH option missing or changed", script);
  }
  for (const char* option : {"--nodes", "--nodelist", "--ntasks"})
    if (!options.count(option)) failWith("an #SBATCH option missing", script);
  if (options.size() != expected.size() + 3) failWith("an #SBATCH option not asked for", script);
  if (commands.size() != 3 || commands[0] != "set -eu" || commands[1].rfind("export SLURM_HOSTFILE=", 0) != 0 ||
      commands[2].rfind("exec srun ", 0) != 0)
    failWith("commands other than set, export and exec srun", script);
  return 0;
}
