#!/usr/bin/env python3
"""bench/peers' measurements (run by bench/peers/run.sh, which builds the programs first).

For each Task Bench pattern and width W (the cores, and four columns per core), every system runs the same
graph at grains from about 2 ms down, interleaved (A B C ... A B C ...) so a slow spell of a shared
machine falls on all alike, the median of the rounds kept. Efficiency = useful compute (W x steps x grain,
the grain from the kernel's calibrated speed on one core) / (wall x cores). METG(50%) is the grain at which
a system's efficiency falls through 50%, interpolated in log(grain) between the two grains around it. Every
run's checksum must equal every other system's for the same graph: a mismatch stops the benchmark."""
import argparse
import math
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from sloc import code_lines  # noqa: E402  (bench/sloc.py, shared with bench/paper)

PATTERNS = ["trivial", "stencil_1d", "fft", "nearest", "all_to_all"]
RESULT = re.compile(r"^taskbench (\S+) system=(\S+) width=(\d+) steps=(\d+) iterations=(\d+) "
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


def dispar_program(pattern, width, mpi):
    """Builds taskbench.dsp for one pattern and width and maps it with streammap's defaults."""
    folder = os.path.join(work, "dispar", "%s_%d_%s" % (pattern, width, mpi))
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "taskbench_graph.h"), "w") as header:
        header.write(run([os.path.join(work, "taskbench_graph"), pattern, str(width)]))
    run([os.path.join(build, "bin", "disparcc"), os.path.join(options.sources, "taskbench", "taskbench.dsp"),
         "-o", "taskbench", "-I" + os.path.join(options.sources, "taskbench"), "-I" + folder, "--mpi", mpi],
        cwd=folder)
    run([os.path.join(build, "bin", "streammap"), "map", "taskbench.rtg.json", "--history", "none"], cwd=folder)
    return folder


# Each system: how to run one graph. dispar and dispar_mpich as a user runs them (streammap map's default
# grouping: no more ranks than cores); mpi a rank per column (oversubscribed at W > cores); StarPU-MPI a
# rank per core, one CPU worker each, the columns dealt to ranks.
def systems(pattern, width, folders):
    starpu = ["mpirun.openmpi", "--oversubscribe", "-n", str(cores), os.path.join(work, "taskbench_starpu"),
              pattern, str(width)]
    streammap = os.path.join(build, "bin", "streammap")
    return {
        "dispar": lambda s, g: run([streammap, "run", "--history", "none", "./taskbench", s, g],
                                   cwd=folders["openmpi"]),
        "starpu": lambda s, g: run(starpu + [s, g], extra={"STARPU_NCPU": "1"}),
        "starpu_dmda": lambda s, g: run(starpu + [s, g], extra={"STARPU_NCPU": "1", "STARPU_SCHED": "dmda"}),
        "mpi": lambda s, g: run(["mpirun.openmpi", "--oversubscribe", "-n", str(width),
                                 os.path.join(work, "taskbench_mpi_openmpi"), pattern, s, g]),
        "dispar_mpich": lambda s, g: run([streammap, "run", "--launcher", "fork", "--history", "none",
                                          "./taskbench", s, g], cwd=folders["mpich"]),
        "mpi_mpich": lambda s, g: run([options.mpiexec, "-launcher", "fork", "-n", str(width),
                                       os.path.join(work, "taskbench_mpi_mpich"), pattern, s, g]),
    }


def measure(pattern, width, runners, steps, iterations, rounds):
    """Median wall of each system over the rounds, interleaved; checks every checksum against the first."""
    walls, checksum = {name: [] for name in runners}, None
    # dmda's history-based model, calibrated on this grain before it is timed
    run(["mpirun.openmpi", "--oversubscribe", "-n", str(cores), os.path.join(work, "taskbench_starpu"), pattern,
         str(width), str(steps), str(iterations)],
        extra={"STARPU_NCPU": "1", "STARPU_SCHED": "dmda", "STARPU_CALIBRATE": "1"})
    for _ in range(rounds):
        for name, runner in runners.items():
            found = RESULT.findall(runner(str(steps), str(iterations)))
            if len(found) != 1:
                sys.exit("peers: %s printed no result line for %s W=%d" % (name, pattern, width))
            line = found[0]
            if checksum is None:
                checksum = line[5]
            elif line[5] != checksum:
                sys.exit("peers: %s W=%d steps=%d iterations=%d: %s's checksum %s differs from %s" % (
                    pattern, width, steps, iterations, name, line[5], checksum))
            walls[name].append(float(line[6]))
    return {name: statistics.median(values) for name, values in walls.items()}, checksum


def metg(points):
    """The grain (s) where efficiency falls through 0.5, interpolated in log(grain); points: (grain, eff)
    from the largest grain down. None where it never reached 0.5; 0 where it never fell below."""
    if not points or points[0][1] < 0.5:
        return None
    for (g1, e1), (g2, e2) in zip(points, points[1:]):
        if e1 >= 0.5 > e2:
            f = (e1 - 0.5) / (e1 - e2)
            return math.exp(math.log(g1) + f * (math.log(g2) - math.log(g1)))
    return 0.0


nanoseconds = float(run([os.path.join(work, "taskbench_calibrate")]))
widths = [cores, 4 * cores]
print("peers: %d cores, kernel %.3f ns per iteration (one core), load average %s" % (
    cores, nanoseconds, " ".join(open("/proc/loadavg").read().split()[:3])))
if options.quick:
    print("peers --quick: every system, every pattern, widths %s, one small grain: the checksums must agree" % widths)
results = {}
for pattern in PATTERNS:
    for width in widths:
        folders = {mpi: dispar_program(pattern, width, mpi) for mpi in ("openmpi", "mpich")}
        runners = systems(pattern, width, folders)
        if options.quick:
            walls, checksum = measure(pattern, width, runners, 6, 2000, 1)
            print("  %-10s W=%-2d %d systems agree: checksum %s" % (pattern, width, len(walls), checksum))
            continue
        curves = {name: [] for name in runners}
        grain = 2e-3
        while grain > 1e-6:
            iterations = max(1, int(round(grain / (nanoseconds * 1e-9))))
            steps = max(8, min(4000, int(0.15 * cores / (width * grain))))
            walls, _ = measure(pattern, width, runners, steps, iterations, options.rounds)
            useful = width * steps * iterations * nanoseconds * 1e-9
            line = []
            for name, wall in walls.items():
                curves[name].append((grain, useful / (wall * cores)))
                line.append("%s %.2f" % (name, curves[name][-1][1]))
            print("  %-10s W=%-2d grain %8.1f us, %4d steps: efficiency %s" % (
                pattern, width, grain * 1e6, steps, ", ".join(line)), flush=True)
            if all(curve[-1][1] < 0.3 for curve in curves.values()):
                break
            grain /= 2
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
if options.quick:
    sys.exit(0)


def spell(value):
    if value is None:
        return "> 2000"
    if value == 0:
        return "< 1"
    return "%.1f" % (value * 1e6)


names = list(next(iter(results.values())).keys())
print("\nMETG(50%%) in microseconds (lower is better), %d cores, median of %d rounds" % (cores, options.rounds))
print("%-11s %3s " % ("pattern", "W") + " ".join("%12s" % n for n in names) + "   dispar/mpi  dispar/best starpu")
verdicts = []
for (pattern, width), values in results.items():
    def ratio(a, b):
        if a is None or b is None or b == 0:
            return float("nan") if a != b else 1.0
        return a / b
    best_starpu = min((v for v in (values["starpu"], values["starpu_dmda"]) if v is not None), default=None)
    to_mpi, to_starpu = ratio(values["dispar"], values["mpi"]), ratio(values["dispar"], best_starpu)
    print("%-11s %3d " % (pattern, width) + " ".join("%12s" % spell(values[n]) for n in names) +
          "   %10.2f  %17.2f" % (to_mpi, to_starpu))
    verdicts.append(("%s W=%d: DISPAR <= 1.2x MPI" % (pattern, width), to_mpi <= 1.2))
    verdicts.append(("%s W=%d: DISPAR below StarPU-MPI" % (pattern, width), to_starpu < 1.0))
print()
for text, ok in verdicts:
    print("%s  %s" % ("PASS" if ok else "FAIL", text))
print("%s  source: DISPAR's the smallest" % ("PASS" if sizes["dispar"] < min(sizes["starpu"], sizes["mpi"]) else "FAIL"))
