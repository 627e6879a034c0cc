#!/usr/bin/env bash
# Resolution rate of the colour-sensor scan on the simulated brick, through real ptys and
# two processes per cube: `cubot sim --pty --seed S` then `cubot scan --robot --port`.
# Usage: scripts/robot-scan-rate.sh PALETTE FIRST_SEED COUNT [SPEED] [JOBS]
set -u
CUBOT=${CUBOT:-target/release/cubot}
palette=$1; first=$2; count=$3; speed=${4:-100}; jobs=${5:-2}
one() {
  seed=$1
  exec 3< <("$CUBOT" sim --pty --seed "$seed" --speed "$speed" --palette "$palette" 2>/dev/null)
  simpid=$!
  read -r path <&3; read -r cube <&3
  err=$(mktemp)
  got=$("$CUBOT" scan --robot --port "$path" 2>"$err" | head -1 | cut -d' ' -f1)
  kill "$simpid" 2>/dev/null
  if [ "$got" = "$cube" ]; then echo "ok $seed"; else
    echo "FAIL $seed got=$got want=$cube: $(tr -s '[:space:]' ' ' < "$err" | head -c 300)"; fi
  rm -f "$err"
}
export -f one; export CUBOT palette speed
seq "$first" $((first + count - 1)) | xargs -P "$jobs" -I{} bash -c 'one {}' |
  awk '{ n++; if ($1 == "ok") ok++; else print } END { printf "%s: %d/%d resolved exactly (%.2f%%)\n", ENVIRON["palette"], ok, n, 100*ok/n }'
