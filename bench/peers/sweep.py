#!/usr/bin/env python3
"""bench/peers' measurements (run by bench/peers/run.sh, which builds the programs first).

For each Task Bench pattern and width W (the cores, and four columns per core), every system runs the same
graph at grains from 2 ms down by thirds (each system until its efficiency falls below 50%), interleaved
(A B C ... A B C ...) so a slow spell of a shared machine falls on all alike, the median of the rounds kept.
Efficiency = useful compute (the graph's tasks x grain: W x steps but in the tree, whose first steps are
narrower; the grain from the kernel's calibrated speed on one core) / (wall x cores). METG(50%) is the grain at which
a system's efficiency falls through 50%, interpolated in log(grain) between the two grains around it. Every
run's checksum must equal every other system's for the same graph: a mismatch stops the benchmark."""
import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from sloc import code_lines  # noqa: E402  (bench/sloc.py, shared with bench/paper)

PATTERNS = os.environ.get("PEERS_PATTERNS", "trivial stencil_1d fft nearest all_to_all tree").split()
RESULT = re.compile(r"^taskbench (\S+) system=(\S+) width=(\d+) steps=(\d+) tasks=(\d+) iterations=(\d+) "
                    r"checksum=(\d+) wall=([0-9.]+)$", re.M)

parser = argparse.ArgumentParser()
parser.add_argument("--quick", action="store_true")
parser.add_argument("--build", required=True)
parser.add_argument("--mpiexec", required=True)
parser.add_argument("--sources", required=True)
parser.add_argument("--work", required=True)
parser.add_argument("--rounds", type=int, default=int(os.environ.get("PEERS_ROUNDS", "5")))
options = parser.parse_args()
work, build = options.work, options.build
cores = os.cpu_count() or 1
environment = dict(os.environ, STARPU_SILENT="1", STARPU_HOME=os.path.join(work, "starpu"))
if os.geteuid() == 0:  # Open MPI's mpirun refuses root without these
    environment.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def run(command, cwd=work, extra=None, timeout=300):
    env = dict(environment, **(extra or {}))
    done = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout)
    if done.returncode != 0:
        sys.exit("peers: %s failed (exit %d):\n%s" % (" ".join(command), done.returncode, done.stdout[-3000:]))
    return done.stdout


MASK = (1 << 64) - 1


def mix(x):
    """splitmix64's finaliser, as taskbench.h's tb_mix."""
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def reference_checksum(pattern, width, steps):
    """The graph's checksum computed here, from Task Bench's definitions of the patterns (core/core.cc's
    dependencies(), written afresh), not from taskbench.h's slot rules: what every version must print."""
    levels = max(width.bit_length() - 1, 0)

    def width_at(t):
        return min(width, 1 << t) if pattern == "tree" else width

    def parents(i, t):
        if pattern == "trivial" or t == 0:
            return []
        if pattern == "stencil_1d":
            return [j for j in (i - 1, i, i + 1) if 0 <= j < width]
        if pattern == "nearest":
            return [j for j in range(i - 2, i + 3) if 0 <= j < width]
        if pattern == "fft":
            return sorted({i, i ^ (1 << ((t - 1) % levels))}) if levels else [i]
        if pattern == "all_to_all":
            return list(range(width))
        if pattern == "tree":
            return [i // 2]
        sys.exit("peers: no reference for pattern %s" % pattern)

    values, total = {}, 0
    for t in range(steps):
        current = {}
        for i in range(width_at(t)):
            inputs = sum(mix((values[j] + j) & MASK) for j in parents(i, t)) & MASK
            current[i] = mix(inputs ^ ((t << 32) & MASK) ^ i)
            total = (total + current[i]) & MASK
        values = current
    return str(total)


def dispar_program(pattern, width, mpi):
    """Builds taskbench.dsp for one pattern and width and maps it with streammap's defaults."""
    folder = os.path.join(work, "dispar", "%s_%d_%s" % (pattern, width, mpi))
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "taskbench_graph.h"), "w") as header:
        header.write(run([os.path.join(work, "taskbench_graph"), pattern, str(width)]))
    program = "taskbench_%s_%d" % (pattern, width)  # its own name: the performance history is by program
    run([os.path.join(build, "bin", "disparcc"), os.path.join(options.sources, "taskbench", "taskbench.dsp"),
         "-o", program, "-I" + os.path.join(options.sources, "taskbench"), "-I" + folder, "--mpi", mpi], cwd=folder)
    streammap = os.path.join(build, "bin", "streammap")
    run([streammap, "map", program + ".rtg.json"], cwd=folder)
    # As a user's first run: measured, so that the timed runs are mapped from measured costs (a run
    # remaps first where they moved, docs/streammap.md "streammap run").
    launcher = ["--launcher", "fork"] if mpi == "mpich" else []
    run([streammap, "run"] + launcher + ["./" + program, "20", "100000"], cwd=folder)
    return folder, program


# Each system: how to run one graph. dispar and dispar_mpich as a user runs them: streammap run, which
# measures every run into the performance history and maps from the measured costs (no more ranks than
# cores); mpi a rank per column (oversubscribed at W > cores). StarPU two ways:
# one rank with a CPU worker per core (its best on one node: starpu, and starpu_dmda with its performance
# model calibrated on each grain first), and StarPU-MPI's distributed form, a rank per core with one worker
# each and the columns dealt to the ranks (starpu_mpi; each rank's MPI progression thread polls beside its
# worker, so on a machine of few cores it competes with the workers: the price of that design here).
STARPU_DMDA = {"STARPU_NCPU": str(cores), "STARPU_SCHED": "dmda"}


def starpu_command(ranks, pattern, width):
    return ["mpirun.openmpi", "--oversubscribe", "-n", str(ranks), os.path.join(work, "taskbench_starpu"), pattern,
            str(width)]


def systems(pattern, width, folders):
    streammap = os.path.join(build, "bin", "streammap")
    one, each = starpu_command(1, pattern, width), starpu_command(cores, pattern, width)
    def dispar(mpi, launcher):
        folder, program = folders[mpi]
        return lambda s, g: run([streammap, "run"] + launcher + ["./" + program, s, g], cwd=folder)

    return {
        "dispar": dispar("openmpi", []),
        "starpu": lambda s, g: run(one + [s, g], extra={"STARPU_NCPU": str(cores)}),
        "starpu_dmda": lambda s, g: run(one + [s, g], extra=STARPU_DMDA),
        "starpu_mpi": lambda s, g: run(each + [s, g], extra={"STARPU_NCPU": "1"}),
        "mpi": lambda s, g: run(["mpirun.openmpi", "--oversubscribe", "-n", str(width),
                                 os.path.join(work, "taskbench_mpi_openmpi"), pattern, s, g]),
        "dispar_mpich": dispar("mpich", ["--launcher", "fork"]),
        "mpi_mpich": lambda s, g: run([options.mpiexec, "-launcher", "fork", "-n", str(width),
                                       os.path.join(work, "taskbench_mpi_mpich"), pattern, s, g]),
    }


def measure(pattern, width, runners, steps, iterations, rounds):
    """Median wall of each system over the rounds, interleaved, the checksum and the graph's tasks; checks
    every checksum and task count against the first's."""
    walls, checksum, tasks = {name: [] for name in runners}, None, None
    if "starpu_dmda" in runners:  # dmda's history-based model, calibrated on this grain before it is timed
        run(starpu_command(1, pattern, width) + [str(steps), str(iterations)],
            extra=dict(STARPU_DMDA, STARPU_CALIBRATE="1"))
    for _ in range(rounds):
        for name, runner in runners.items():
            found = RESULT.findall(runner(str(steps), str(iterations)))
            if len(found) != 1:
                sys.exit("peers: %s printed no result line for %s W=%d" % (name, pattern, width))
            line = found[0]
            if checksum is None:
                checksum, tasks = line[6], int(line[4])
            elif line[6] != checksum or int(line[4]) != tasks:
                sys.exit("peers: %s W=%d steps=%d iterations=%d: %s's checksum %s (%s tasks) differs from %s (%d)" % (
                    pattern, width, steps, iterations, name, line[6], line[4], checksum, tasks))
            walls[name].append(float(line[7]))
    return {name: statistics.median(values) for name, values in walls.items()}, checksum, tasks


def metg(points):
    """(grain in s, bound): the grain where efficiency falls through 0.5, interpolated in log(grain), bound
    "="; where it never reached 0.5, the largest grain tried and ">"; where it never fell below, the
    smallest grain tried and "<". points: (grain, efficiency) from the largest grain down."""
    if points[0][1] < 0.5:
        return points[0][0], ">"
    for (g1, e1), (g2, e2) in zip(points, points[1:]):
        if e1 >= 0.5 > e2:
            f = (e1 - 0.5) / (e1 - e2)
            return math.exp(math.log(g1) + f * (math.log(g2) - math.log(g1))), "="
    return points[-1][0], "<"


nanoseconds = float(run([os.path.join(work, "taskbench_calibrate")]))
widths = [cores, 4 * cores]
print("peers: %d cores, kernel %.3f ns per iteration (one core), load average %s" % (
    cores, nanoseconds, " ".join(open("/proc/loadavg").read().split()[:3])))
if options.quick:
    print("peers --quick: every system, every pattern, widths %s, one small grain: the checksums must agree, with"
          " each other and with the graph's, computed here" % widths)
results = {}
for pattern in PATTERNS:
    for width in widths:
        folders = {mpi: dispar_program(pattern, width, mpi) for mpi in ("openmpi", "mpich")}
        runners = systems(pattern, width, folders)
        if options.quick:
            walls, checksum, _ = measure(pattern, width, runners, 6, 2000, 1)
            if checksum != reference_checksum(pattern, width, 6):
                sys.exit("peers: %s W=%d: every system printed checksum %s, the graph's is %s" % (
                    pattern, width, checksum, reference_checksum(pattern, width, 6)))
            print("  %-10s W=%-2d %d systems agree, with the reference: checksum %s" % (
                pattern, width, len(walls), checksum))
            continue
        curves = {name: [] for name in runners}
        grain = 2e-3
        while grain > 1e-6:
            iterations = max(1, int(round(grain / (nanoseconds * 1e-9))))
            steps = max(8, min(4000, int(0.15 * cores / (width * grain))))
            # Only the systems still at 50% or more: one below has its crossing already.
            running = {name: runner for name, runner in runners.items()
                       if not curves[name] or curves[name][-1][1] >= 0.5}
            if not running:
                break
            walls, _, tasks = measure(pattern, width, running, steps, iterations, options.rounds)
            useful = tasks * iterations * nanoseconds * 1e-9
            line = []
            for name, wall in walls.items():
                curves[name].append((grain, useful / (wall * cores)))
                line.append("%s %.2f" % (name, curves[name][-1][1]))
            print("  %-10s W=%-2d grain %8.1f us, %4d steps: efficiency %s" % (
                pattern, width, grain * 1e6, steps, ", ".join(line)), flush=True)
            grain /= 3
        results[(pattern, width)] = {name: metg(points) for name, points in curves.items()}

sources = os.path.join(options.sources, "taskbench")
sizes = {"dispar": code_lines(os.path.join(sources, "taskbench.dsp")) +
         code_lines(os.path.join(sources, "taskbench_graph.cpp")),
         "starpu": code_lines(os.path.join(sources, "taskbench_starpu.c")),
         "mpi": code_lines(os.path.join(sources, "taskbench_mpi.cpp"))}
print("source lines (non-blank, non-comment; taskbench.h, shared by all three, not counted): " +
      ", ".join("%s %d" % item for item in sizes.items()) +
      " (dispar: taskbench.dsp %d + taskbench_graph.cpp %d, the generator of its family's port list)" % (
          code_lines(os.path.join(sources, "taskbench.dsp")), code_lines(os.path.join(sources, "taskbench_graph.cpp"))))


# The paper's FIR (examples/fir): DISPAR's fir.dsp (its filter a GPU VNODE, on the host path here), the
# hand-written MPI + CUDA program built without nvcc (its filter a CPU loop of the same arithmetic,
# examples/fir/handwritten) and fir/fir_starpu.cpp. Frames per second over the whole run, launch included
# (what a user waits for); every version must print the same line (frames, max_error, checksum).
def fir_programs():
    programs = {}
    for mpi in ("openmpi", "mpich"):
        folder = os.path.join(work, "fir_" + mpi)
        os.makedirs(folder, exist_ok=True)
        run([os.path.join(build, "bin", "disparcc"), os.path.join(options.sources, "..", "..", "examples", "fir",
                                                                  "fir.dsp"), "-o", "fir", "--mpi", mpi], cwd=folder)
        streammap = os.path.join(build, "bin", "streammap")
        run([streammap, "map", "fir.rtg.json"], cwd=folder)
        launcher = ["--launcher", "fork"] if mpi == "mpich" else []
        run([streammap, "run"] + launcher + ["./fir", "8"], cwd=folder)  # measured first, as a user's first run
        programs["dispar" if mpi == "openmpi" else "dispar_mpich"] = (
            lambda frames, folder=folder, launcher=launcher: run([streammap, "run"] + launcher + ["./fir", frames],
                                                                 cwd=folder))
    starpu = os.path.join(work, "fir_starpu")
    programs["starpu"] = lambda frames: run(["mpirun.openmpi", "-n", "1", starpu, frames],
                                            extra={"STARPU_NCPU": str(cores)})
    programs["starpu_mpi"] = lambda frames: run(["mpirun.openmpi", "--oversubscribe", "-n", str(cores), starpu,
                                                 frames], extra={"STARPU_NCPU": "1"})
    programs["mpi"] = lambda frames: run(["mpirun.openmpi", "--oversubscribe", "-n", "4",
                                          os.path.join(work, "fir_mpi_openmpi"), frames])
    programs["mpi_mpich"] = lambda frames: run([options.mpiexec, "-launcher", "fork", "-n", "4",
                                                os.path.join(work, "fir_mpi_mpich"), frames])
    return programs


FIR_LINE = re.compile(r"^frames=\d+ max_error=\S+ checksum=\S+$", re.M)
fir_frames = "8" if options.quick else "256"
fir_rates, fir_line = {}, None
programs = fir_programs()
for _ in range(1 if options.quick else options.rounds):
    for name, program in programs.items():
        start = time.monotonic()
        found = FIR_LINE.findall(program(fir_frames))
        seconds = time.monotonic() - start
        if len(found) != 1 or (fir_line is not None and found[0] != fir_line):
            sys.exit("peers: FIR: %s printed %s, not the other versions' '%s'" % (name, found, fir_line))
        fir_line = found[0]
        fir_rates.setdefault(name, []).append(int(fir_frames) / seconds)
fir_sizes = {"dispar": code_lines(os.path.join(options.sources, "..", "..", "examples", "fir", "fir.dsp")),
             "starpu": code_lines(os.path.join(options.sources, "fir", "fir_starpu.cpp")),
             "mpi": code_lines(os.path.join(options.sources, "..", "..", "examples", "fir", "handwritten",
                                            "fir_mpi_cuda.cu"))}
print("FIR: %d versions print '%s'; source lines %s" % (
    len(programs), fir_line, ", ".join("%s %d" % item for item in fir_sizes.items())))
if options.quick:
    sys.exit(0)
fir = {name: statistics.median(rates) for name, rates in fir_rates.items()}


def spell(result):
    value, bound = result
    return ("%.1f" if bound == "=" else bound + " %.1f") % (value * 1e6)


names = list(next(iter(results.values())).keys())
print("\nMETG(50%%) in microseconds (lower is better; '>': not 50%% efficient even at the largest grain, '<': "
      "still 50%% efficient at the smallest), %d cores, median of %d rounds" % (cores, options.rounds))
print("%-11s %3s " % ("pattern", "W") + " ".join("%13s" % n for n in names) + "  dispar/mpi  dispar/starpu")
verdicts = []
for (pattern, width), values in results.items():
    best_starpu = min((values[n] for n in ("starpu", "starpu_dmda", "starpu_mpi")), key=lambda r: r[0])
    to_mpi, to_starpu = values["dispar"][0] / values["mpi"][0], values["dispar"][0] / best_starpu[0]
    print("%-11s %3d " % (pattern, width) + " ".join("%13s" % spell(values[n]) for n in names) +
          "  %10.2f  %13.2f" % (to_mpi, to_starpu))
    verdicts.append(("%s W=%d: DISPAR's METG <= 1.2x hand-written MPI's" % (pattern, width), to_mpi <= 1.2))
    verdicts.append(("%s W=%d: DISPAR's METG below the best StarPU's" % (pattern, width),
                     to_starpu < 1.0 or (values["dispar"][1] == best_starpu[1] == "<")))
print()
for text, ok in verdicts:
    print("%s  %s" % ("PASS" if ok else "FAIL", text))
print("%s  Task Bench source: DISPAR's the smallest" % (
    "PASS" if sizes["dispar"] < min(sizes["starpu"], sizes["mpi"]) else "FAIL"))

print("\nFIR, %s frames of 65536 samples, frames per second over the whole run (median of %d rounds):" % (
    fir_frames, options.rounds))
print("  " + ", ".join("%s %.1f" % item for item in fir.items()))
best_starpu_fir = max(fir["starpu"], fir["starpu_mpi"])
print("%s  FIR: DISPAR >= the best StarPU's (%.2fx)" % ("PASS" if fir["dispar"] >= best_starpu_fir else "FAIL",
                                                        fir["dispar"] / best_starpu_fir))
print("%s  FIR: DISPAR >= 0.95x hand-written MPI's (%.2fx)" % ("PASS" if fir["dispar"] >= 0.95 * fir["mpi"] else "FAIL",
                                                               fir["dispar"] / fir["mpi"]))
print("%s  FIR source: DISPAR's the smallest" % (
    "PASS" if fir_sizes["dispar"] < min(fir_sizes["starpu"], fir_sizes["mpi"]) else "FAIL"))
