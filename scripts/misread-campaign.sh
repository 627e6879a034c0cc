#!/usr/bin/env bash
# Misread campaign: a robot simulator as its own process (`cubot sim --pty --faults misread`:
# until the first layer turn its sensor reads a seeded pair of stickers as each other; its
# own cube kept in a state file that only this script reads) and
# `cubot run --port ... --best-effort` driving it, per palette and seed.
#
# Reported per palette (judged by the simulator's own cube, never by what cubot says of it):
# * at the target: runs that ended with the simulator's cube solved, and how many rounds
#   of execute-and-check they took (1: the first scan's cube was right; 2 or more: the
#   check after execution found the cube elsewhere and the run solved again from there);
# * stopped off the target (exit 1, with the state it saw);
# * false "reached" (exit 0 while the simulator's cube is not solved), errors (exit 2 or a
#   crash), hangs (a run over its time limit).
# Exits 1 if any run claimed a false success, failed or hung.
#
# Usage: scripts/misread-campaign.sh [RUNS per palette (default 100)] [ROBOT line|mindcub3r
#        (default line)] [FIRST SEED (default 1)] [JOBS (default 2)]
# Uses $CUBOT if set, else target/release/cubot (built if missing). Needs python3.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-100}
ROBOT=${2:-line}
SEED=${3:-1}
JOBS=${4:-2}
CUBOT=${CUBOT:-target/release/cubot}
[ -x "$CUBOT" ] || cargo build --release --quiet
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# Solver tables once, before runs in parallel.
"$CUBOT" run --sim --robot line --speed 5000 --search-ms 0 -q --journal "$WORK/warm.jsonl" \
    >/dev/null 2>&1 || true

python3 - "$CUBOT" "$WORK" "$RUNS" "$ROBOT" "$SEED" "$JOBS" <<'PY'
import collections, concurrent.futures, json, os, subprocess, sys, time
cubot, work, runs, robot, seed0, jobs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
LIMIT = 300                     # seconds a run may take before it counts as hung
SPEED = {'mindcub3r': '500', 'line': '50'}[robot]
PALETTES = ['standard', 'no-white', 'fluorescent', 'faded']
RUN = ['--best-effort', '--search-ms', '0', '--solutions', '3', '--json', '-q']

def names(s):
    m = {}
    return ''.join(m.setdefault(c, chr(97 + len(m))) for c in s)

def solved(s):
    n = len(s) // 6
    return all(len(set(s[i * n:(i + 1) * n])) == 1 for i in range(6))

def sim_cube(state):
    """The simulator's cube once its motors are at rest and its state file has stopped
    changing for half a second (the simulator writes it every 20 ms, later on a loaded
    machine: a single read may see a state from before the last turns)."""
    t0, seen, since = time.monotonic(), None, 0.0
    while time.monotonic() - t0 < 20:
        try:
            lines = open(state).read().split('\n')
            now = lines[0] if lines[2] == 'idle' else None
        except (OSError, IndexError):
            now = None
        if now is not None and now == seen:
            if time.monotonic() - since >= 0.5:
                return now
        else:
            seen, since = now, time.monotonic()
        time.sleep(0.05)
    return None

def one(palette, seed):
    d = os.path.join(work, f'{palette}-{seed}')
    os.makedirs(d)
    state = os.path.join(d, 'state.txt')
    sim = subprocess.Popen([cubot, 'sim', '--pty', '--robot', robot, '--seed', str(seed),
                            '--speed', SPEED, '--palette', palette, '--faults', 'misread',
                            '--state-file', state],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        port = sim.stdout.readline().strip()
        sim.stdout.readline()
        t = time.monotonic()
        try:
            o = subprocess.run([cubot, 'run', '--port', port, '--robot', robot,
                                '--journal', os.path.join(d, 'j.jsonl')] + RUN,
                               capture_output=True, text=True, timeout=LIMIT)
        except subprocess.TimeoutExpired:
            return ('hang', 0, seed, '')
        secs = time.monotonic() - t
        lines = [json.loads(l) for l in o.stdout.splitlines() if l.startswith('{')]
        last = lines[-1] if lines else {}
        cube = sim_cube(state)
        rounds = len(last.get('rounds', []))
        at = cube is not None and solved(cube)
        if o.returncode == 0 and last.get('reached_target') and not at:
            return ('false-reached', rounds, seed, cube)
        if o.returncode == 0 and at:
            return ('reached', rounds, seed, secs)
        if o.returncode == 1:
            return ('stopped', rounds, seed, last.get('stopped') or last.get('message', ''))
        return ('error', rounds, seed, (o.stderr or '')[-300:])
    finally:
        sim.kill()
        sim.wait()

bad = 0
print(f'robot {robot}, {runs} runs per palette, seeds {seed0}..{seed0 + runs - 1}, '
      f'simulator speed {SPEED}, cubot run --best-effort --max-rounds 3 (default)')
for palette in PALETTES:
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        out = list(ex.map(lambda s: one(palette, s), range(seed0, seed0 + runs)))
    kinds = collections.Counter(k for k, *_ in out)
    rounds = collections.Counter(r for k, r, *_ in out if k == 'reached')
    secs = [x for k, _, _, x in out if k == 'reached']
    print(f'{palette:12} at the target {kinds["reached"]}/{runs} '
          f'(rounds: {", ".join(f"{r}: {n}" for r, n in sorted(rounds.items()))}); '
          f'stopped off the target {kinds["stopped"]}; false "reached" {kinds["false-reached"]}; '
          f'errors {kinds["error"]}; hangs {kinds["hang"]}; '
          f'mean wall {sum(secs) / max(len(secs), 1):.1f} s', flush=True)
    for k, r, seed, x in out:
        if k != 'reached':
            print(f'  seed {seed}: {k} after {r} round(s): {x}', flush=True)
    bad += kinds['false-reached'] + kinds['error'] + kinds['hang']
sys.exit(1 if bad else 0)
PY
