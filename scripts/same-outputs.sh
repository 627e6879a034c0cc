#!/usr/bin/env bash
# Checks that two builds of cubot give the same outputs on the same seeds: what a change that
# only moves code (a refactor) must keep. Captures, with each binary, solver solutions and
# node counts, colour resolutions of the real samples, synthetic accuracy, planner robot
# times (node-budgeted search) and whole simulated runs (both robots, both scanners), then
# compares them with timing fields (and the simulated sensor's timing-dependent colour means
# in journals) left out.
#
#   scripts/same-outputs.sh OLD_CUBOT NEW_CUBOT [OUTDIR]
#
# Exit 0 when every output matches, 1 when one differs (the first differing line of each
# file is printed), 2 on a usage error. Needs python3 for the comparison.
set -uo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: scripts/same-outputs.sh OLD_CUBOT NEW_CUBOT [OUTDIR]" >&2; exit 2; }
old=$(realpath "$1"); new=$(realpath "$2"); out=${3:-$(mktemp -d)}
command -v python3 >/dev/null || { echo "same-outputs: python3 is needed for the comparison" >&2; exit 2; }
export CUBOT_CACHE_DIR=${CUBOT_CACHE_DIR:-$out/cache}

capture() { # BIN DIR
  local B=$1 O=$2; mkdir -p "$O"
  "$B" bench solve --states samples/states/random-3x3x3-1000.txt --count 200 --no-peer --no-batch --json -q > "$O/bench-solve.jsonl" 2>/dev/null
  head -100 samples/states/random-3x3x3-1000.txt | "$B" solve - > "$O/solve3.txt" 2>&1
  head -100 samples/states/random-2x2x2-1000.txt | "$B" solve - > "$O/solve2.txt" 2>&1
  for f in samples/realdata/cases/*.json; do echo "== $f"; "$B" resolve "$f" --json 2>&1; done > "$O/resolve.txt"
  "$B" bench resolve --count 300 --json -q > "$O/bench-resolve.jsonl" 2>&1
  "$B" bench resolve --realdata samples/realdata/cases --json -q > "$O/bench-realdata.jsonl" 2>&1
  "$B" bench robot --cubes 12 --solutions 200 --search-nodes 200000 --json -q > "$O/bench-robot.jsonl" 2>&1
  for s in 1 2 3 4; do
    for r in mindcub3r line; do
      "$B" run --sim --seed $s --speed 5000 --robot $r --search-ms 0 --json -q \
        --journal "$O/j-$r-$s.jsonl" > "$O/run-$r-$s.jsonl" 2>&1; echo "rc=$?" >> "$O/run-$r-$s.jsonl"
    done
    "$B" run --sim --seed $s --speed 5000 --scanner camera --search-ms 0 --json -q \
      --journal "$O/j-cam-$s.jsonl" > "$O/run-cam-$s.jsonl" 2>&1; echo "rc=$?" >> "$O/run-cam-$s.jsonl"
  done
}

echo "capturing with $old" >&2; capture "$old" "$out/old"
echo "capturing with $new" >&2; capture "$new" "$out/new"
python3 - "$out/old" "$out/new" <<'PY'
import json, os, re, sys
a_dir, b_dir = sys.argv[1], sys.argv[2]
# Fields that measure the clock or the machine, or name a file of this run.
drop = re.compile(r"^(journal|created|cpu|load_average|table_load_seconds|table_memory_bytes"
                  r"|wall_seconds|mean_solve_seconds|measured_seconds|.*_ms|cpu_.*|.*wall.*)$")
def norm(x, journal_start=False):
    if isinstance(x, dict):
        return {k: norm(v) for k, v in x.items()
                if not drop.match(k) and not (journal_start and k == "colors")}
    if isinstance(x, list):
        return [norm(v) for v in x]
    return x
def lines(path):
    out = []
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        try:
            v = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        # The simulated sensor samples while the turntable moves, so its colour means
        # depend on thread timing; the cube read from them does not.
        out.append(json.dumps(norm(v, isinstance(v, dict) and v.get("type") == "start"),
                              sort_keys=True))
    return out
differ = 0
names = sorted(os.listdir(a_dir))
for n in names:
    a, b = lines(os.path.join(a_dir, n)), lines(os.path.join(b_dir, n))
    if a == b:
        continue
    differ += 1
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            print(f"{n} line {i + 1}:\n  old {x[:300]}\n  new {y[:300]}")
            break
    else:
        print(f"{n}: {len(a)} lines against {len(b)}")
print(f"{len(names)} outputs compared, {differ} differ")
sys.exit(1 if differ else 0)
PY
