#!/usr/bin/env bash
# Parser fuzz of every command-line input: seeded malformed states, move strings, scan
# JSON, colour profiles, camera rigs, robot configurations, journals, saved states and
# numeric flags, each fed to the command that reads it under a time limit. Reports panics
# (exit 101, or "panicked" on stderr) and hangs (the time limit reached); exits 1 if any.
#
# Usage: scripts/fuzz-cli.sh [CASES (default 3000)] [SEED (default 1)]
# Uses $CUBOT if set, else target/debug/cubot (built if missing). Needs python3.
set -euo pipefail
cd "$(dirname "$0")/.."
CASES=${1:-3000}
SEED=${2:-1}
CUBOT=${CUBOT:-target/debug/cubot}
[ -x "$CUBOT" ] || cargo build --quiet
export CUBOT_CACHE_DIR=${CUBOT_CACHE_DIR:-$(mktemp -d)}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# Valid inputs to mutate.
"$CUBOT" synth-scan --seed 3 >"$WORK/scan.json"
"$CUBOT" synth-scan --state solved >"$WORK/solved.json"
"$CUBOT" calibrate "$WORK/solved.json" -o "$WORK/profile.toml" >/dev/null
"$CUBOT" run --sim --robot line --faults silent@5 --speed 5000 --search-ms 100 -q \
    --journal "$WORK/journal.jsonl" >/dev/null 2>&1 || true
"$CUBOT" save "$WORK/saved.json" --sim --speed 5000 -q >/dev/null 2>&1

python3 - "$CUBOT" "$WORK" "$CASES" "$SEED" <<'PY'
import concurrent.futures, json, os, random, subprocess, sys
cubot, work, cases, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
read = lambda p: open(p, 'rb').read()
seeds = {
    'state': b'DRLUUBFBRBLURRLRUBLRDDFDLFUFUFFDBRDUBRUFLLFDDBFLUBLRBD',
    'moves': b"R U R' U' F2 D L2 B' x y2 M E' S Rw2 (R U)2",
    'scan': read(f'{work}/scan.json'),
    'profile': read(f'{work}/profile.toml'),
    'rig': read('calibration/camera-1920x1080-example.toml'),
    'config': read('calibration/mindcub3r.toml'),
    'journal': read(f'{work}/journal.jsonl'),
    'saved': read(f'{work}/saved.json'),
}
TOKENS = [b'nan', b'NaN', b'inf', b'-inf', b'1e308', b'-1e308', b'1e309', b'-5.0', b'0',
          b'-0', b'18446744073709551616', b'-1', b'""', b'[]', b'{}', b'null', b'true',
          b'\x00', b'\xff\xfe', b'\xe2\x80\x8b', b'"', b"'", b'[', b']', b'{', b'}', b'=',
          b'\n', b'#', b'9' * 40, b'U' * 1000, b'x' * 5000, b'[[[[[[[[[[', b'99999999999']
NUMBERS = [t.decode('latin1') for t in TOKENS[:12]] + ['abc', '', '1e-320', '0x10', '1_000',
           ' 1', '3.5', '1e18', '4294967296', '65536', '-2147483649']

def mutate(data):
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(7)
        i = rng.randrange(len(b) + 1)
        if op == 0 and b:                       # flip a byte
            b[min(i, len(b) - 1)] = rng.randrange(256)
        elif op == 1:                           # cut
            b = b[:i]
        elif op == 2:                           # insert a token
            b[i:i] = rng.choice(TOKENS)
        elif op == 3 and b:                     # replace a number with a token
            digits = [k for k, c in enumerate(b) if chr(c).isdigit()]
            if digits:
                k = rng.choice(digits)
                e = k
                while e < len(b) and (chr(b[e]).isdigit() or b[e] in b'.-e'):
                    e += 1
                b[k:e] = rng.choice(TOKENS)
        elif op == 4 and b:                     # delete a span
            b[i:i + rng.randint(1, 20)] = b''
        elif op == 5 and b:                     # duplicate a span
            j = rng.randrange(len(b))
            b[i:i] = b[j:j + rng.randint(1, 200)]
        else:                                   # swap two lines
            lines = bytes(b).split(b'\n')
            if len(lines) > 1:
                x, y = rng.randrange(len(lines)), rng.randrange(len(lines))
                lines[x], lines[y] = lines[y], lines[x]
            b = bytearray(b'\n'.join(lines))
    return bytes(b)

def case(n):
    kind = rng.choice(list(seeds) + ['number'] * 2)
    f = f'{work}/case-{n}'
    if kind == 'number':
        v = rng.choice(NUMBERS)
        scan = f'{work}/scan.json'
        return kind, rng.choice([
            ['resolve', scan, f'--doubt={v}'], ['synth-scan', f'--noise={v}'],
            ['synth-scan', f'--fade={v}'], ['synth-scan', f'--count={v}'],
            ['synth-scan', f'--exposure={v}'], ['sim', f'--speed={v}'],
            ['sim', f'--latency={v}'], ['run', f'--speed={v}'], ['run', f'--search-ms={v}'],
            ['solve', 'solved', f'--timeout={v}'], ['solve', 'solved', f'--max-length={v}'],
            ['solve', 'solved', f'--solutions={v}'], ['random', f'--seed={v}'],
            ['robot', 'spin', v], ['bench', 'scan', f'--occlusion={v}', '--renders=0'],
        ]), None
    data = mutate(seeds[kind])
    text = data.decode('utf-8', 'replace').replace('\x00', '')
    line = text.split('\n')[0][:3000]
    if kind == 'state':
        cmd = rng.choice([['validate', line], ['show', line], ['solve', line, '--timeout', '2000'],
                          ['apply', line, 'R U'], ['validate', '-'], ['solve', f'@{f}']])
    elif kind == 'moves':
        cmd = rng.choice([['invert', line], ['simplify', line], ['apply', 'solved', line],
                          ['solve', 'solved', '--target-moves', line]])
    elif kind == 'scan':
        cmd = rng.choice([['resolve', f], ['calibrate', f, '-o', f'{f}.out.toml']])
    elif kind == 'profile':
        cmd = ['resolve', f'{work}/scan.json', '--profile', f]
    elif kind == 'rig':
        cmd = ['scan', '--images', 'samples/images', '--rig', f]
    elif kind == 'config':
        cmd = ['robot', '--port', f'{work}/no-such-port', '--robot-config', f, 'home']
    elif kind == 'journal':
        cmd = ['run', '--resume', f, '--sim', '--speed', '5000', '--search-ms', '100',
               '--journal', f'{f}.out']
    else:
        cmd = ['run', '--sim', '--target-file', f, '--speed', '5000', '--search-ms', '100',
               '--journal', f'{f}.out']
    return kind, cmd, data

def run(n, kind, cmd, data):
    f = f'{work}/case-{n}'
    if data is not None:
        open(f, 'wb').write(data)
    stdin = data if cmd[-1] == '-' else b''
    try:
        p = subprocess.run([cubot, '-q'] + cmd if cmd[0] != 'robot' else [cubot] + cmd,
                           input=stdin, capture_output=True, timeout=30)
    except subprocess.TimeoutExpired:
        return kind, cmd, 'hang'
    err = p.stderr.decode('utf-8', 'replace')
    if p.returncode == 101 or 'panicked' in err:
        return kind, cmd, 'panic: ' + err[-400:]
    return kind, cmd, None

jobs = [(n,) + case(n) for n in range(cases)]
counts, bad = {}, []
with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
    for kind, cmd, problem in ex.map(lambda j: run(*j), jobs):
        counts[kind] = counts.get(kind, 0) + 1
        if problem:
            bad.append((kind, cmd, problem))
panics = sum(1 for b in bad if b[2].startswith('panic'))
hangs = sum(1 for b in bad if b[2] == 'hang')
print(f'cases: {cases} (seed {seed}); by input: ' +
      ', '.join(f'{k} {v}' for k, v in sorted(counts.items())))
print(f'panics: {panics}; hangs: {hangs}')
for kind, cmd, problem in bad[:20]:
    print(f'  {kind}: {[c[:80] for c in cmd]}: {problem}')
sys.exit(1 if bad else 0)
PY
