#!/bin/bash
# Run profiles, measured (bench/profile/README.md): (1) how well a profile sees known work: known_work.dsp,
# four worker instances of relative work 1:2:4:8, all instances in one rank, the profile's per-instance
# times against the true ratios; (2) what profiling costs on the FIR example: best of 7 runs with and
# without DISPAR_PROFILE and with DISPAR_TRACE (run traces), alternating, same run (256 frames); (3) what each
# costs on a 64 KiB pipe (profile_overhead).
# Usage: bench/profile/run.sh [BUILD_DIR]   (default: build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../common.sh"

# (1) Known work.
cp "$here/known_work.dsp" .
"$build/bin/disparcc" known_work.dsp -o known_work >/dev/null
# All instances in one rank: streammap's own grouping on a one-node description.
cat > one-node.json <<'JSON'
{"format": "dispar-cluster", "version": 1, "nodes": [{"host": "localhost",
 "cpu": {"sockets": 1, "cores": 2, "threads": 2, "speed": 1.0}, "memory_bytes": 1073741824}]}
JSON
"$build/bin/streammap" map known_work.rtg.json --cluster one-node.json --ranks 1 -o one.machinefile >/dev/null
DISPAR_MAPPING=one.map.json DISPAR_PROFILE=known.json "$mpiexec" -launcher fork -n 1 ./known_work >/dev/null
python3 - <<'PY'
import json
profile = json.load(open("known.json"))
workers = sorted((l for l in profile["instances"] if l["vnode"] == "worker"), key=lambda l: l["replica"])
print("run profile of known work (1:2:4:8, four worker instances in one rank with source and sink, 2 cores)")
print("%-10s %6s %10s %10s %10s %10s %14s %10s" % ("instance", "true", "cpu_s", "ratio", "compute_s", "ratio",
                                                  "compute_cpu_s", "ratio"))
worst = worst_own = 0.0
for line in workers:
    true = 2 ** line["replica"]
    cpu = line["cpu_s"] / workers[0]["cpu_s"]
    wall = line["compute_s"] / workers[0]["compute_s"]
    own = line["compute_cpu_s"] / workers[0]["compute_cpu_s"]
    worst = max(worst, abs(cpu - true) / true)
    worst_own = max(worst_own, abs(own - true) / true)
    print("worker[%d] %6d %9.3fs %9.2fx %9.3fs %9.2fx %13.3fs %9.2fx" % (line["replica"], true, line["cpu_s"], cpu,
          line["compute_s"], wall, line["compute_cpu_s"], own))
print("worst ratio error: cpu_s %.1f%%, compute_cpu_s (what streammap profile add uses) %.1f%% (target <= 20%%)"
      % (worst * 100, worst_own * 100))
PY

# (2) The FIR example, with and without profiling.
cp "$here/../../examples/fir/fir.dsp" .
"$build/bin/disparcc" fir.dsp -o fir >/dev/null
best_plain= best_profiled= best_traced=
for _ in 1 2 3 4 5 6 7; do
  for mode in plain profiled traced; do
    start=$(date +%s.%N)
    case $mode in
      profiled) DISPAR_PROFILE=fir.json "$mpiexec" -launcher fork -n 4 ./fir 256 >/dev/null ;;
      traced) DISPAR_TRACE=fir.trace.json "$mpiexec" -launcher fork -n 4 ./fir 256 >/dev/null ;;
      *) "$mpiexec" -launcher fork -n 4 ./fir 256 >/dev/null ;;
    esac
    end=$(date +%s.%N)
    t=$(python3 -c "print($end - $start)")
    best=best_$mode
    printf -v "$best" '%s' "$(python3 -c "b='${!best}'; print($t if not b else min($t, float(b)))")"
  done
done
python3 -c "print('FIR example (4 ranks, 256 frames), best of 7: %.3f s without, %.3f s with DISPAR_PROFILE: overhead %+.1f%% (target <= 2%%)' % ($best_plain, $best_profiled, ($best_profiled / $best_plain - 1) * 100))"
python3 -c "print('  %.3f s with DISPAR_TRACE: overhead %+.1f%% (target <= 5%%)' % ($best_traced, ($best_traced / $best_plain - 1) * 100))"
# The same question through the VM's noise: what profiling adds to each port call and each kernel launch,
# times the port calls (each message written once and read once; item ports' inline fast paths run no
# timer, so this counts too many) and launches of the run, against the run's time.
timer_cost=$("$build/bin/profile_overhead" --timer-cost)
python3 - "$best_plain" $timer_cost <<'PY'
import json, sys
plain, ns_port, ns_port_cpu, ns_launch, ns_span, ns_end = (float(a) for a in sys.argv[1:7])
profile = json.load(open("fir.json"))
calls = 2 * sum(p["messages"] for p in profile["pipes"])
launches = sum(k["launches"] for k in profile["kernels"])
cpu_clock = any(l.get("compute_cpu_s") is not None for l in profile["instances"])
ns = ns_port_cpu if cpu_clock else ns_port
direct = calls * ns + launches * ns_launch
print("  direct cost: %d port calls x %.0f ns (with%s the thread CPU clock; %.0f ns without, %.0f ns with)"
      % (calls, ns, "" if cpu_clock else "out", ns_port, ns_port_cpu))
print("    + %d kernel launches x %.0f ns = %.2f ms, %.3f%% of the run without profiling (target <= 2%%)"
      % (launches, ns_launch, direct * 1e-6, direct * 1e-9 / plain * 100))
messages = sum(p["messages"] for p in profile["pipes"])
traced = calls * ns_span + 2 * messages * ns_end + launches * ns_span
print("  tracing's direct cost: %d port calls and %d launches x %.0f ns + %d message ends x %.0f ns = %.2f ms,"
      " %.3f%% of the run (target <= 5%%; gathering and writing the file come after the program's end)"
      % (calls, launches, ns_span, 2 * messages, ns_end, traced * 1e-6, traced * 1e-9 / plain * 100))
PY

# (3) A 64 KiB pipe.
"$mpiexec" -launcher fork -n 2 "$build/bin/profile_overhead"
