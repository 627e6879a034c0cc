#!/usr/bin/env bash
# End-to-end success rate on the built-in simulator: one `cubot run --sim` process per seed
# (scan -> resolve -> solve -> plan -> execute -> verify by the simulator's read-back),
# several at a time (a run mostly waits on the simulated robot), then a tally per palette.
#
#   scripts/e2e.sh [--robot mindcub3r|line] [--scanner sensor|camera] [--runs N]
#                  [--first-seed S] [--palettes standard,faded] [--jobs J] [--out DIR]
#
# Uses target/release/cubot (built if missing). Each run's last JSON line goes to
# DIR/<robot>-<scanner>-<palette>-<seed>.json with its exit code; the tally counts
# reached (exit 0, reached_target true), refused (exit 1: scan stayed ambiguous or target
# not reached), failed (exit 2: an operational error), and the one that must stay zero:
# a summary saying reached_target:true while the simulator's cube is not at the target
# (final_state != target).
set -euo pipefail
cd "$(dirname "$0")/.."
robot=mindcub3r scanner=sensor runs=100 first=100000 palettes=standard,faded jobs=6 out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --robot) robot=$2; shift 2 ;;
    --scanner) scanner=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --first-seed) first=$2; shift 2 ;;
    --palettes) palettes=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "e2e.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
bin=${CUBOT_BIN:-target/release/cubot}
[ -x "$bin" ] || cargo build --release --quiet
out=${out:-$(mktemp -d)}
mkdir -p "$out"
export CUBOT_BIN_ABS; CUBOT_BIN_ABS=$(realpath "$bin")
one() { # palette seed
  local f="$OUT/$ROBOT-$SCANNER-$1-$2.json" rc=0
  "$CUBOT_BIN_ABS" run --sim --robot "$ROBOT" --scanner "$SCANNER" --palette "$1" --seed "$2" \
    --speed 5000 -q --json --journal "$OUT/$ROBOT-$SCANNER-$1-$2.journal" >"$f.all" 2>"$f.err" || rc=$?
  # `run` exits 0 when the target was reached, 1 for a well-formed no, 2 for an operational error
  tail -1 "$f.all" >"$f"
  echo "$rc" >"$f.rc"
}
export -f one
export OUT=$out ROBOT=$robot SCANNER=$scanner
for p in ${palettes//,/ }; do
  seq "$first" $((first + runs - 1)) | sed "s/^/$p /"
done | xargs -P "$jobs" -n 2 bash -c 'one "$0" "$1"'
echo "robot=$robot scanner=$scanner runs=$runs per palette, seeds $first..$((first + runs - 1)), results in $out"
for p in ${palettes//,/ }; do
  reached=0 refused=0 failed=0 false_ok=0
  for f in "$out/$robot-$scanner-$p-"*.json; do
    rc=$(cat "$f.rc")
    ok=$(grep -c '"reached_target":true' "$f" || true)
    if [ "$ok" = 1 ]; then
      fs=$(sed -n 's/.*"final_state":"\([A-Z]*\)".*/\1/p' "$f")
      tg=$(sed -n 's/.*"target":"\([A-Z]*\)".*/\1/p' "$f")
      if [ "$rc" = 0 ] && [ -n "$fs" ] && [ "$fs" = "$tg" ]; then reached=$((reached + 1)); else false_ok=$((false_ok + 1)); fi
    elif [ "$rc" = 1 ]; then refused=$((refused + 1))
    else failed=$((failed + 1)); fi
  done
  echo "$p: reached $reached/$runs  refused $refused  failed $failed  success-on-wrong-cube $false_ok"
done
