#!/bin/sh
# check_placement.sh MAP_JSON RANK_HOSTS
# Compares where ranks actually ran with where app.map.json put them. RANK_HOSTS holds one
# "RANK HOST" line per rank, as the ranks printed them (e.g. $PMI_RANK and
# $MPIR_CVAR_CH3_INTERFACE_HOSTNAME under `mpiexec -launcher fork -f app.machinefile`), in any order.
# Exit status 0 when every rank of the map ran exactly once on its mapped host; 1 otherwise, with one
# line per mismatch; 2 on bad arguments. Reads the map as `streammap map` writes it (two-space indent).
set -eu
if [ $# -ne 2 ] || [ ! -r "$1" ] || [ ! -r "$2" ]; then
  echo "usage: check_placement.sh MAP_JSON RANK_HOSTS (both readable files)" >&2
  exit 2
fi
awk '
  # First file: the map. Take (rank, host) pairs from the top-level "ranks" array only.
  FNR == NR {
    if ($0 ~ /^  "ranks": \[/) { inRanks = 1; next }
    if (inRanks && $0 ~ /^  \]/) { inRanks = 0; next }
    if (inRanks && $0 ~ /^      "rank": /) { r = $2; sub(/,$/, "", r) }
    if (inRanks && $0 ~ /^      "host": /) {
      h = $0; sub(/^      "host": "/, "", h); sub(/",?$/, "", h); want[r] = h; ranks++
    }
    next
  }
  # Second file: what ran.
  NF == 0 { next }
  NF != 2 { printf("line %d: expected \"RANK HOST\", got \"%s\"\n", FNR, $0); bad = 1; next }
  {
    seen[$1]++
    if (!($1 in want)) { printf("rank %s: not in the map\n", $1); bad = 1 }
    else if (want[$1] != $2) { printf("rank %s: ran on %s, mapped to %s\n", $1, $2, want[$1]); bad = 1 }
    if (seen[$1] == 2) { printf("rank %s: reported more than once\n", $1); bad = 1 }
  }
  END {
    if (ranks == 0) { print "no ranks found in the map"; exit 1 }
    for (r in want) if (!(r in seen)) { printf("rank %s: did not report\n", r); bad = 1 }
    if (bad) exit 1
    printf("placement ok: %d ranks on their mapped hosts\n", ranks)
  }
' "$1" "$2"
