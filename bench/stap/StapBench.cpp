// examples/stap end to end, with library-call fusion (disparcc's default) and without (-fno-fusion),
// built and run in the same invocation: median wall time of the whole job under mpiexec for N CPIs,
// the ratio, and the steady-state time per CPI (from runs of 1 and N CPIs), which leaves out start-up.
// Both builds must print the same detections. Usage: stap_bench [CPIS [REPS]] (default 16, 3).
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace {

std::string run(const std::string& command, int* status) {
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    *status = -1;
    return output;
  }
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  *status = pclose(pipe);
  return output;
}

struct Timed {
  double seconds;
  std::string output;
};

Timed timedJob(const std::string& dir, const std::string& binary, int cpis) {
  const std::string command =
      "cd '" + dir + "' && " MPIEXEC_PATH " -launcher fork -n 7 ./" + binary + " " + std::to_string(cpis) + " 2>&1";
  int status = 0;
  const auto start = std::chrono::steady_clock::now();
  std::string output = run(command, &status);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (status != 0) {
    std::fprintf(stderr, "stap_bench: %s failed:\n%s", command.c_str(), output.c_str());
    std::exit(1);
  }
  return {seconds, output};
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int cpis = argc > 1 ? std::atoi(argv[1]) : 16;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 3;
  const std::string dir = std::filesystem::temp_directory_path() / "dispar-stap-bench";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(DISPAR_SOURCE_DIR "/examples/stap/stap.dsp", dir + "/stap.dsp",
                             std::filesystem::copy_options::overwrite_existing);
  int status = 0;
  for (const auto& [binary, flag] : {std::pair<std::string, std::string>{"fused", ""}, {"unfused", "-fno-fusion"}}) {
    const std::string out =
        run("cd '" + dir + "' && " DISPARCC_PATH " stap.dsp -o " + binary + " " + flag + " 2>&1", &status);
    if (status != 0) {
      std::fprintf(stderr, "stap_bench: disparcc failed:\n%s", out.c_str());
      return 1;
    }
  }
  std::vector<double> fused, unfused, fusedOne, unfusedOne;
  std::string fusedOutput, unfusedOutput;
  for (int r = 0; r < reps; ++r) {  // interleaved, so drifting load hits both alike
    Timed a = timedJob(dir, "fused", cpis), b = timedJob(dir, "unfused", cpis);
    fused.push_back(a.seconds);
    unfused.push_back(b.seconds);
    fusedOutput = a.output;
    unfusedOutput = b.output;
    fusedOne.push_back(timedJob(dir, "fused", 1).seconds);
    unfusedOne.push_back(timedJob(dir, "unfused", 1).seconds);
  }
  if (fusedOutput != unfusedOutput) {
    std::fprintf(stderr, "stap_bench: the builds disagree\nfused:\n%sunfused:\n%s", fusedOutput.c_str(),
                 unfusedOutput.c_str());
    return 1;
  }
  const double f = median(fused), u = median(unfused);
  const double perF = (f - median(fusedOne)) / (cpis - 1), perU = (u - median(unfusedOne)) / (cpis - 1);
  std::printf("examples/stap, %d CPIs, 7 ranks, median of %d runs (same detections in both builds)\n", cpis, reps);
  std::printf("  end to end:  fused %.3f s   unfused %.3f s   speedup %.2fx (target >= 2x) %s\n", f, u, u / f,
              u / f >= 2 ? "met" : "NOT met");
  std::printf("  per CPI:     fused %.1f ms  unfused %.1f ms  speedup %.2fx (start-up left out)\n", perF * 1e3,
              perU * 1e3, perU / perF);
  std::filesystem::remove_all(dir);
  return 0;
}
