#!/usr/bin/env bash
# What the live page costs a run: the wall time of `cubot run --sim` without `--view`, and
# with it while a headless Chromium shows the page, in alternating pairs (the same seed in
# a pair, the order flipped every pair). Prints each pair and the means.
#
#   scripts/view-bench.sh [PAIRS] [SPEED] [CLIENT]   (defaults: 10 pairs, --speed 20, chromium)
#
# CLIENT `curl` reads the event stream only (no browser): what serving costs cubot itself,
# without a browser's own work on the same cores. Needs the release build (built if
# missing), chromium, curl and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-10}
speed=${2:-20}
client=${3:-chromium}
bin=target/release/cubot
[ -x "$bin" ] || cargo build --release -q
for tool in chromium curl python3; do
  command -v "$tool" >/dev/null || { echo "view-bench: $tool is needed" >&2; exit 2; }
done
tmp=$(mktemp -d)
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --remote-debugging-port=0 --user-data-dir="$tmp/profile" about:blank \
  >/dev/null 2>"$tmp/chromium.err" &
browser=$!
trap 'kill $browser 2>/dev/null; wait $browser 2>/dev/null; rm -rf "$tmp"' EXIT
devtools=""
for _ in $(seq 100); do
  devtools=$(grep -o 'ws://[^/]*' "$tmp/chromium.err" | head -1 | sed 's,ws://,,') && [ -n "$devtools" ] && break
  sleep 0.1
done
[ -n "$devtools" ] || { echo "view-bench: chromium did not start" >&2; exit 2; }

run() { # SEED VIEW -> wall milliseconds on stdout
  local seed=$1 view=$2 t0 t1
  t0=$(date +%s%N)
  if [ "$view" = 1 ]; then
    "$bin" run --sim --seed "$seed" --speed "$speed" --search-ms 0 -q --view \
      >/dev/null 2>"$tmp/run.err" &
    local pid=$! url=""
    for _ in $(seq 500); do
      url=$(grep -o 'http://[^ ]*' "$tmp/run.err" | head -1) && [ -n "$url" ] && break
      sleep 0.01
    done
    if [ "$client" = curl ]; then
      curl -sN "${url}events" >/dev/null &
      local reader=$!
      wait "$pid"
      kill "$reader" 2>/dev/null || true
    else
      curl -s -X PUT "http://$devtools/json/new?$url" >/dev/null
      wait "$pid"
    fi
  else
    "$bin" run --sim --seed "$seed" --speed "$speed" --search-ms 0 -q >/dev/null 2>&1
  fi
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000000))
}

: > "$tmp/times"
for k in $(seq "$pairs"); do
  if [ $((k % 2)) = 1 ]; then a=$(run "$k" 0); b=$(run "$k" 1); else b=$(run "$k" 1); a=$(run "$k" 0); fi
  echo "pair $k (seed $k): without $a ms, with the page open $b ms" >&2
  echo "$a $b" >> "$tmp/times"
done
python3 - "$tmp/times" <<'PY'
import statistics, sys
rows = [tuple(map(int, l.split())) for l in open(sys.argv[1]) if l.strip()]
a = [r[0] for r in rows]; b = [r[1] for r in rows]
d = [(y - x) / x * 100 for x, y in rows]
se = statistics.stdev(d) / len(d) ** 0.5 if len(d) > 1 else float("nan")
print(f"{len(rows)} pairs: without {statistics.mean(a) / 1000:.2f} s, with the page open "
      f"{statistics.mean(b) / 1000:.2f} s (mean); difference {statistics.mean(d):+.1f} % "
      f"± {se:.1f} % (mean ± standard error), {statistics.median(d):+.1f} % median")
PY
