#!/usr/bin/env bash
# Seeded whole runs (`cubot run --sim`: scan, solve, execute, verify) on a brick, by cube
# size and link latency, judged by the run's own outcome and the simulator's read-back:
# a run counts as reached only when it exits 0 and says "reached the target" and
# "verified by"; a run that exits 0 without both is a false success.
#
# Usage: scripts/firmware-runs.sh [RUNS3 (20)] [RUNS2 (5)] [LATENCIES (0,60)] [SEED (1)]
#   BRICK=lms2012 (default; LEGO's firmware, built by scripts/firmware-brick.sh) or ours.
# Uses $CUBOT if set, else target/release/cubot (built if missing). Exits 1 if any run
# failed to reach its target.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS3=${1:-20}
RUNS2=${2:-5}
LATENCIES=${3:-0,60}
SEED=${4:-1}
BRICK=${BRICK:-lms2012}
CUBOT=${CUBOT:-target/release/cubot}
[ -x "$CUBOT" ] || cargo build --release --quiet
if [ "$BRICK" = lms2012 ]; then
  bash scripts/firmware-brick.sh >/dev/null
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
bad=0
for lat in ${LATENCIES//,/ }; do
  for size in 3 2; do
    runs=$RUNS3
    [ "$size" = 2 ] && runs=$RUNS2
    reached=0 false=0 failed=0 secs=0
    for ((i = 0; i < runs; i++)); do
      seed=$((SEED + i))
      start=$(date +%s%N)
      rc=0
      # Each run its own journal (a stopped run's journal is not overwritten).
      rm -f "$WORK/run.jsonl"
      "$CUBOT" run --sim --brick "$BRICK" --size "$size" --seed "$seed" \
        --faults "latency=$lat" -q --journal "$WORK/run.jsonl" \
        >"$WORK/out" 2>"$WORK/err" || rc=$?
      secs=$((secs + ($(date +%s%N) - start) / 1000000))
      if [ "$rc" = 0 ] && grep -q "reached the target" "$WORK/out" "$WORK/err" \
        && grep -q "verified by" "$WORK/out"; then
        reached=$((reached + 1))
      elif [ "$rc" = 0 ]; then
        false=$((false + 1))
        echo "FALSE SUCCESS: size $size, seed $seed, latency $lat ms" >&2
      else
        failed=$((failed + 1))
        why=$(grep -m1 -i "error\|stopped\|not reached" "$WORK/err" "$WORK/out" | cut -c1-400)
        echo "not reached: size $size, seed $seed, latency $lat ms, exit $rc: ${why:-$(tail -1 "$WORK/err")}" >&2
      fi
    done
    [ "$runs" -gt 0 ] || continue
    printf '%sx%sx%s, %s ms, brick %s: %d/%d reached and verified, %d false successes, %d stopped; %d s wall per run\n' \
      "$size" "$size" "$size" "$lat" "$BRICK" "$reached" "$runs" "$false" "$failed" \
      "$((secs / runs / 1000))"
    [ "$reached" = "$runs" ] || bad=1
  done
done
exit $bad
