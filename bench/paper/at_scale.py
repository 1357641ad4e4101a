#!/usr/bin/env python3
"""The mapping at scale, simulated (bench/paper/README.md, docs/simulation.md).

Generated clusters of 64, 256 and 1,000 nodes (mixed core counts, GPU counts and generations, links)
and generated programs of matching size (a pipeline of alternating CPU and GPU stages, and a split-join
whose GPU workers regroup into CPU workers), each built once with `disparcc --target smpi` and run by
`streammap simulate` under the round-robin, paper and refine mappings. Prints per case the simulated
makespans, the cost model's predicted periods and the simulation's wall time; checks every mapping
printed the same checksum; then the targets (refine >= 1.5x faster than round-robin at the median,
never slower than paper; a case whose medians say otherwise by more than the noise margin is
simulated again in interleaved pairs and decided on all its runs) and the rank correlation of predicted
period and simulated makespan.

Usage: bench/paper/at_scale.py [--build DIR] [--sizes 64,256,1000] [--repeat N] [--confirm PAIRS] [--quick]
"""
import argparse
import collections
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time

GPUS = [  # name, SMs, clock (kHz), compute capability: the generations of examples/clusters
    ("Tesla K20m", 13, 705500, "3.5"),
    ("Tesla V100-SXM2-16GB", 80, 1530000, "7.0"),
    ("NVIDIA A100-SXM4-40GB", 108, 1410000, "8.0"),
    ("NVIDIA H100 80GB HBM3", 132, 1980000, "9.0"),
]
ALGORITHMS = ["round-robin", "paper", "refine"]
GPU_SPEEDUP = 100          # streammap simulate's default: the costs below assume it
MESSAGES_PER_CHAIN = 16    # messages each replica chain carries: enough for the steady state to dominate
BASE_ITERATIONS = 100000   # one unit of work: a dependent multiply-add chain of this length
NOISE_MARGIN = 0.98        # paper / refine below this is refine slower, beyond the runs' noise


def cluster(nodes, seed):
    """A deterministic mixed cluster in the dispar-cluster format of examples/clusters."""
    rng = random.Random(seed)
    described = []
    for i in range(nodes):
        cores = rng.choice([8, 16, 32, 64])
        gpu_count = rng.choice([0, 0, 0, 1, 2, 4, 8])
        name, sms, clock, cc = rng.choice(GPUS)
        described.append({
            "host": "n%04d" % i, "status": "up", "source": "import", "last_heartbeat": None,
            "cpu": {"sockets": 2, "cores": cores, "threads": 2 * cores, "speed": 1.0},
            "memory_bytes": 68719476736, "numa": [], "caches": [],
            "network": {"bandwidth_bytes_per_s": rng.choice([12.5e9, 25e9, 100e9])},
            "gpus": [{"index": g, "name": name, "uuid": "", "compute_capability": cc,
                      "memory_bytes": 17179869184, "multiprocessors": sms, "clock_khz": clock,
                      "pci_bus_id": "", "numa_node": 0, "rate": None} for g in range(gpu_count)],
        })
    return {"format": "dispar-cluster", "version": 1, "nodes": described}


PRELUDE = r"""#include <dispar/dispar.h>
#include <cstdio>
#include <vector>

constexpr int kValues = 1024;  // 4 KiB messages

// `units` units of work: a dependent chain, so that its time is proportional to its length.
__host__ __device__ inline float spin(const float* in, long units) {
  float acc = 0.0f;
  for (long i = 0; i < units * %(base)dL; ++i) acc = acc * 0.999f + in[i %% kValues];
  return acc;
}

__global__ void spinKernel(const float* in, float* out, long units) {
  if (blockIdx.x == 0 && threadIdx.x == 0) out[0] = spin(in, units);
}

// A GPU stage's step: the values to the device, the kernel, its result back into the message.
void gpuStep(std::vector<float>& values, float* deviceIn, float* deviceOut, long units) {
  cudaMemcpy(deviceIn, values.data(), kValues * sizeof(float), cudaMemcpyHostToDevice);
  spinKernel<<<1, 1>>>(deviceIn, deviceOut, units);
  float result = 0.0f;
  cudaMemcpy(&result, deviceOut, sizeof(float), cudaMemcpyDeviceToHost);
  values[0] += result * 1e-6f;
}
""" % {"base": BASE_ITERATIONS}


def cost_of(kind, units, messages):
    """The cost clause consistent with the simulation: a unit of work takes the same host time on a CPU
    core and in a host-path kernel; on the reference GPU it takes GPU_SPEEDUP times less."""
    per_run = messages * units
    return per_run if kind == "cpu" else per_run / GPU_SPEEDUP


def largest_divisor_up_to(n, bound):
    """The largest divisor of n not above bound (at least 1)."""
    return max(d for d in range(1, max(1, bound) + 1) if n % d == 0)


def stage(name, kind, replicas, units, read, write, messages):
    """A stage of `replicas` replicas, each handling `messages` messages of `units` units of work."""
    body = ["#pragma streamap resource(%s) replicas(%d) cost(%g)" % (kind, replicas,
                                                                    cost_of(kind, units, messages)),
            "VNODE(%s, IN(%s), OUT(%s)) {" % (name, read, write),
            "  std::vector<float> values;"]
    if kind == "gpu":
        body += ["  float *deviceIn = nullptr, *deviceOut = nullptr;",
                 "  cudaMalloc(reinterpret_cast<void**>(&deviceIn), kValues * sizeof(float));",
                 "  cudaMalloc(reinterpret_cast<void**>(&deviceOut), sizeof(float));",
                 "  while (%s.read(values)) {" % read,
                 "    gpuStep(values, deviceIn, deviceOut, %d);" % units,
                 "    %s.write(values);" % write,
                 "  }",
                 "  cudaFree(deviceIn);",
                 "  cudaFree(deviceOut);"]
    else:
        body += ["  while (%s.read(values)) {" % read,
                 "    values[0] += spin(values.data(), %d) * 1e-6f;" % units,
                 "    %s.write(values);" % write,
                 "  }"]
    return "\n".join(body + ["}", ""])


def program(shape, instances):
    """A .dsp of about `instances` VNODE instances: (source text, instance count)."""
    # The replica counts share large factors, as a programmer sizing such a program would make them:
    # split(rr) links writer replica i to the readers (i + j*W) mod R, a cycle of R / gcd(W, R) of them
    # (docs/runtime.md), so counts that share no factor link every writer to every reader (55 sources
    # to 443 replicas: 24,365 links and communicators, whose end-of-stream markers SimGrid 3.32 then
    # keeps in one list that every completed message walks: README.md, "At scale").
    if shape == "pipeline":
        # sources -> a (cpu) -> b (gpu, heavy) -> c (cpu) -> d (gpu) -> sinks, R paired replicas per stage.
        replicas = max(1, (instances * 8 // 9 - 2) // 4)
        stages = [("a", "cpu", 1), ("b", "gpu", 12), ("c", "cpu", 3), ("d", "gpu", 6)]
        widths = [replicas] * 4
    else:
        # sources -> g (gpu, heavy, G replicas) -> c (cpu, C replicas, regrouped) -> sinks, G:C = 4:3, so
        # that each g replica feeds 3 c replicas and each c replica merges 4.
        quarter = max(1, (instances * 8 // 9 - 2) // 7)
        stages = [("g", "gpu", 16), ("c", "cpu", 2)]
        widths = [4 * quarter, 3 * quarter]
    # About one source and one sink per 8 chains (a single source feeding hundreds of chains would be the
    # bottleneck of every mapping), each feeding (or draining) the same number of them.
    sources = largest_divisor_up_to(widths[0], widths[0] // 8)
    sinks = largest_divisor_up_to(widths[-1], widths[-1] // 8)
    messages = MESSAGES_PER_CHAIN * widths[0]  # through every stage
    per_source = messages // sources
    pipes = ["p0"] + ["p%d" % (i + 1) for i in range(len(stages))]
    text = [PRELUDE] + ["PIPE(float, %s);" % p for p in pipes] + [""]
    text += ["#pragma streamap resource(cpu) replicas(%d)" % sources,
             "VNODE(source, OUT(p0)) {",
             "  std::vector<float> values(kValues);",
             "  for (int j = 0; j < %d; ++j) {" % per_source,
             "    const int m = j * %d + int(dispar::replica());" % sources,
             "    for (int i = 0; i < kValues; ++i) values[i] = float((m * 131 + i * 7) % 97) / 97.0f;",
             "    p0.write(values);",
             "  }",
             "}", ""]
    for (name, kind, units), width, read, write in zip(stages, widths, pipes, pipes[1:]):
        text.append(stage(name, kind, width, units, read, write, messages / width))
    text += ["#pragma streamap resource(cpu) replicas(%d)" % sinks,
             "VNODE(sink, IN(%s)) {" % pipes[-1],
             "  std::vector<float> values;",
             "  double checksum = 0;",
             "  long count = 0;",
             "  while (%s.read(values)) {" % pipes[-1],
             "    for (float v : values) checksum += v;",
             "    ++count;",
             "  }",
             '  std::printf("sink %d: messages=%ld checksum=%.6f\\n", int(dispar::replica()), count, checksum);',
             "}", ""]
    return "\n".join(text), sources + sum(widths) + sinks


# One simulation of one mapping.
Run = collections.namedtuple("Run", "makespan period wall result placement")
# One mapping simulated `repeat` times: the median run's makespan, period, wall time and result, the
# results every run printed, every makespan (ascending), and the placement (the same every run: mapping
# is deterministic).
Simulated = collections.namedtuple("Simulated", "makespan period wall result results makespans placement")


def simulate_median(build, workdir, description, algorithm, repeat):
    """simulate() `repeat` times, as a Simulated."""
    runs = sorted((simulate(build, workdir, description, algorithm) for _ in range(repeat)), key=lambda r: r.makespan)
    median = runs[len(runs) // 2]
    return Simulated(median.makespan, median.period, median.wall, median.result, {r.result for r in runs},
                     [r.makespan for r in runs], median.placement)


def simulate(build, workdir, description, algorithm):
    started = time.monotonic()
    run = subprocess.run([os.path.join(build, "bin", "streammap"), "simulate", "--cluster", description,
                          "--algorithm", algorithm, "./app.smpi"], cwd=workdir, capture_output=True, text=True)
    wall = time.monotonic() - started
    if run.returncode != 0:
        sys.exit("at_scale: %s failed:\n%s%s" % (algorithm, run.stdout, run.stderr[-4000:]))
    makespan = float(re.search(r"simulated makespan: (\S+) s", run.stdout).group(1))
    period = float(re.search(r"predicted period (\S+)", run.stdout).group(1))
    result = " ".join(sorted(re.findall(r"sink \d+: messages=\d+ checksum=\S+", run.stdout)))
    if not result:
        sys.exit("at_scale: %s printed no result:\n%s" % (algorithm, run.stdout))
    # What was placed where: each instance's host and device, the mapping's own file (docs/streammap.md).
    with open(os.path.join(workdir, "app.smpi.map.json")) as mapping:
        placement = json.dumps(json.load(mapping)["ranks"], sort_keys=True)
    return Run(makespan, period, wall, result, placement)


def paper_against_refine(build, workdir, description, runs, pairs):
    """paper's makespan over refine's, where refine may be slower: (ratio, how it was decided).

    Identical placements are one mapping, whatever their simulations say. Otherwise, a ratio below
    NOISE_MARGIN on the medians is checked again by `pairs` interleaved runs of the two (so that a slow
    spell of this machine falls on both alike), and decided on the medians of all their runs."""
    paper, refine = runs["paper"], runs["refine"]
    if paper.placement == refine.placement:
        return 1.0, "refine kept paper's mapping"
    ratio = paper.makespan / refine.makespan
    if ratio >= NOISE_MARGIN or pairs == 0:
        return ratio, None
    paper_runs, refine_runs = list(paper.makespans), list(refine.makespans)
    for _ in range(pairs):
        paper_runs.append(simulate(build, workdir, description, "paper").makespan)
        refine_runs.append(simulate(build, workdir, description, "refine").makespan)
    ratio = statistics.median(paper_runs) / statistics.median(refine_runs)
    return ratio, "%d interleaved pairs more: medians of %d runs, paper %.4f s, refine %.4f s: %.3fx" % (
        pairs, len(paper_runs), statistics.median(paper_runs), statistics.median(refine_runs), ratio)


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    rank = [0.0] * len(values)
    i = 0
    while i < len(order):  # ties share their mean rank
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            rank[order[k]] = (i + j) / 2.0
        i = j + 1
    return rank


def spearman(xs, ys):
    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.mean(rx), statistics.mean(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sx = sum((a - mx) ** 2 for a in rx) ** 0.5
    sy = sum((b - my) ** 2 for b in ry) ** 0.5
    return cov / (sx * sy) if sx and sy else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build"))
    parser.add_argument("--sizes", default="64,256,1000")
    parser.add_argument("--repeat", type=int, default=1,
                        help="simulate each mapping N times and take the median makespan (measured compute varies)")
    parser.add_argument("--confirm", type=int, default=8,
                        help="where refine's median is slower than paper's beyond the noise margin, simulate the "
                             "two N more times, interleaved, and decide on the medians of all runs (0: never)")
    parser.add_argument("--quick", action="store_true", help="16 nodes only (a smoke test)")
    options = parser.parse_args()
    build = os.path.abspath(options.build)
    sizes = [16] if options.quick else [int(s) for s in options.sizes.split(",")]

    rows = []
    # Each cell: the simulated makespan, the simulated time per message (makespan / messages per chain, the
    # pipeline's fill included) and the model's predicted period (per message, in cost units).
    print("%5s %-10s %5s | %-35s | %-35s | %-35s | %8s %8s" % (
        "nodes", "program", "inst", "round-robin: makespan /msg period", "paper: makespan /msg period",
        "refine: makespan /msg period", "rr/ref", "pap/ref"))
    for nodes in sizes:
        for shape in ["pipeline", "splitjoin"]:
            with tempfile.TemporaryDirectory() as workdir:
                description = os.path.join(workdir, "cluster.json")
                with open(description, "w") as out:
                    json.dump(cluster(nodes, seed=nodes), out)
                source, instances = program(shape, nodes)
                with open(os.path.join(workdir, "app.dsp"), "w") as out:
                    out.write(source)
                built = subprocess.run([os.path.join(build, "bin", "disparcc"), "--target", "smpi", "app.dsp",
                                        "-o", "app.smpi"], cwd=workdir, capture_output=True, text=True)
                if built.returncode != 0:
                    sys.exit("at_scale: disparcc failed:\n" + built.stdout + built.stderr)
                case = {"nodes": nodes, "shape": shape, "instances": instances, "runs": {}}
                for algorithm in ALGORITHMS:
                    case["runs"][algorithm] = simulate_median(build, workdir, description, algorithm,
                                                              max(1, options.repeat))
                results = set().union(*(run.results for run in case["runs"].values()))
                if len(results) != 1:
                    sys.exit("at_scale: the mappings computed different results: %s" % sorted(results))
                runs = case["runs"]
                case["rr"] = runs["round-robin"].makespan / runs["refine"].makespan
                case["paper"] = runs["paper"].makespan / runs["refine"].makespan
                rows.append(case)
                cells = " | ".join("%10.4fs %8.3fms %12.6g" % (runs[a].makespan, runs[a].makespan / MESSAGES_PER_CHAIN * 1e3,
                                                               runs[a].period) for a in ALGORITHMS)
                print("%5d %-10s %5d | %s | %7.2fx %7.2fx" % (nodes, shape, instances, cells, case["rr"],
                                                             case["paper"]), flush=True)
                print("      simulation wall time: %s; the %d sinks' results agree" % (
                    ", ".join("%s %.1f s" % (a, runs[a].wall) for a in ALGORITHMS), results.pop().count("sink")),
                      flush=True)
                if options.repeat > 1:
                    print("      makespans of the %d runs: %s" % (options.repeat, ", ".join(
                        "%s %.4f to %.4f s" % (a, runs[a].makespans[0], runs[a].makespans[-1]) for a in ALGORITHMS)), flush=True)
                case["paper_decided"], how = paper_against_refine(build, workdir, description, runs, options.confirm)
                if how:
                    print("      paper / refine: %s" % how, flush=True)

    median_rr = statistics.median(r["rr"] for r in rows)
    worst_paper = min(r["paper_decided"] for r in rows)
    print()
    print("refine vs round-robin, median: %.2fx (target >= 1.5x): %s" % (median_rr, "PASS" if median_rr >= 1.5 else "FAIL"))
    print("refine never slower than paper (%.0f%% noise margin, close cases decided by interleaved runs): "
          "worst paper/refine %.3fx: %s" % (100 * (1 - NOISE_MARGIN), worst_paper,
                                            "PASS" if worst_paper >= NOISE_MARGIN else "FAIL"))
    periods = [r["runs"][a].period for r in rows for a in ALGORITHMS]
    makespans = [r["runs"][a].makespan for r in rows for a in ALGORITHMS]
    # Every case carries MESSAGES_PER_CHAIN messages a chain, so time per message ranks as the makespan does.
    print("model vs simulation: Spearman rank correlation of predicted period and simulated time per message "
          "over %d runs: %.3f" % (len(periods), spearman(periods, makespans)))
    for r in rows:
        best_period = min(r["runs"][a].period for a in ALGORITHMS)
        model_best = [a for a in ALGORITHMS if r["runs"][a].period <= best_period * (1 + 1e-9)]
        simulated_best = min(ALGORITHMS, key=lambda a: r["runs"][a].makespan)
        if simulated_best not in model_best:
            print("  %d nodes, %s: the model's best: %s (period %g); the simulation's: %s (makespan %.4f s against %s)"
                  % (r["nodes"], r["shape"], " = ".join(model_best), best_period, simulated_best,
                     r["runs"][simulated_best].makespan,
                     ", ".join("%.4f s" % r["runs"][a].makespan for a in model_best)))


if __name__ == "__main__":
    main()
