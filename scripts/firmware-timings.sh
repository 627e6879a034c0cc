#!/usr/bin/env bash
# The planner's prediction on LEGO's firmware brick: measure the brick's primitive times
# (`cubot robot --sim --brick lms2012 calibrate-timings` at 0 and 60 ms, into
# target/lms2012-timings.toml), then `cubot bench run` seeded whole runs on the same brick
# with those timings, beside what they predicted.
#
# Usage: scripts/firmware-timings.sh [RUNS (5)] [SPEED (2)] [LATENCY (60)]
# Uses $CUBOT if set, else target/release/cubot (built if missing). About 10 minutes with
# the defaults on a quiet 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
SPEED=${2:-2}
LATENCY=${3:-60}
CUBOT=${CUBOT:-target/release/cubot}
[ -x "$CUBOT" ] || cargo build --release --quiet
bash scripts/firmware-brick.sh >/dev/null
TIMINGS=target/lms2012-timings.toml
rm -f "$TIMINGS"
"$CUBOT" robot --sim --brick lms2012 calibrate-timings --robot-config "$TIMINGS" --write
"$CUBOT" bench run --brick lms2012 --robot-config "$TIMINGS" --runs "$RUNS" \
  --latencies "$LATENCY" --speed "$SPEED" --jobs 1
