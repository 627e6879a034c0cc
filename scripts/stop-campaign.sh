#!/usr/bin/env bash
# Stop-and-resume campaign: a robot simulator as its own process (`cubot sim --pty`, its own
# cube, kept in a state file that only this script reads) and `cubot run --port` driving it,
# interrupted at seeded random points: Ctrl-C, SIGKILL, a lost reply, a stall, a corrupted
# reply byte, a link drop-out, and the cube swapped for another state of it or for a cube of
# other colours before the resume. Both robots. A signal lands after a seeded number of
# confirmed steps plus up to 0.15 s (four cases in five), or at a seeded moment from start-up
# on (the scan included); a fault at a seeded program of the brick (or command of the line
# robot). Each case is then resumed from its journal
# (`cubot run --resume JOURNAL --port ...`) until it ends.
#
# Reported (judged by the simulator's own cube, never by what cubot says of it):
# * interruptions: stops, and faults the run rode out without stopping;
# * stated state right: the state a stop names (its last confirmed state, or one of the
#   states after a prefix of what was in flight) is the simulator's cube;
# * decided right: the resume's reading of the cube picked the simulator's cube;
# * resumes ending with the simulator's cube at the target, or refusing before a layer
#   turned (a cube of other colours);
# * panics, hangs (a process over its time limit), false successes (exit 0 with the
#   simulator's cube not at the target).
# Exits 1 if any case went wrong.
#
# Usage: scripts/stop-campaign.sh [CASES (default 240)] [SEED (default 1)] [JOBS (default 2)]
# Uses $CUBOT if set, else target/release/cubot (built if missing). Needs python3.
set -euo pipefail
cd "$(dirname "$0")/.."
CASES=${1:-240}
SEED=${2:-1}
JOBS=${3:-2}
CUBOT=${CUBOT:-target/release/cubot}
[ -x "$CUBOT" ] || cargo build --release --quiet
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# Solver tables once, before cases run in parallel.
"$CUBOT" run --sim --robot line --speed 5000 --search-ms 0 -q --journal "$WORK/warm.jsonl" \
    >/dev/null 2>&1 || true

python3 - "$CUBOT" "$WORK" "$CASES" "$SEED" "$JOBS" <<'PY'
import concurrent.futures, json, os, random, signal, subprocess, sys, time
cubot, work, cases, seed, jobs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
LIMIT = 150          # seconds a process may take before it counts as hung
SPEED = {'mindcub3r': 100, 'line': 2}
# Wall seconds over which a signal sent at any moment lands (start-up, scan, execution).
SPAN = {'mindcub3r': (0.2, 6.0), 'line': (0.2, 3.0)}
KINDS = ['ctrl-c', 'sigkill', 'drop', 'stall', 'corrupt', 'dropout', 'other-cube', 'foreign-cube']
WEIGHTS = [26, 26, 8, 10, 10, 8, 6, 6]
RUN = ['--search-ms', '0', '--solutions', '3', '--json', '-q']

def names(s):
    """A facelet string with colours renamed in order of first appearance."""
    m = {}
    return ''.join(m.setdefault(c, chr(97 + len(m))) for c in s)

def solved(s):
    n = len(s) // 6
    return all(len(set(s[i * n:(i + 1) * n])) == 1 for i in range(6))

class Sim:
    def __init__(self, d, robot, sim_seed, faults, palette='standard'):
        self.state = os.path.join(d, f'state-{sim_seed}-{palette}.txt')
        args = [cubot, 'sim', '--pty', '--robot', robot, '--seed', str(sim_seed), '--speed',
                str(SPEED[robot]), '--palette', palette, '--state-file', self.state]
        if faults:
            args += ['--faults', faults]
        self.err = open(os.path.join(d, f'sim-{sim_seed}.err'), 'w')
        self.p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self.err, text=True)
        self.path = self.p.stdout.readline().strip()
        self.p.stdout.readline()
    def cube(self):
        """The simulator's cube once its motors are at rest (a robot finishes on its own
        what it was sent before its host died)."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < 10:
            try:
                lines = open(self.state).read().split('\n')
                if lines[2] == 'idle':
                    time.sleep(0.05)
                    again = open(self.state).read().split('\n')
                    if again[2] == 'idle' and again[0] == lines[0]:
                        return lines[0], lines[1]
            except (OSError, IndexError):
                pass
            time.sleep(0.05)
        return None, None
    def stop(self):
        self.p.kill()
        self.p.wait()
        self.err.close()
        return 'panicked' in open(self.err.name).read()

def steps_in(journal):
    try:
        return open(journal).read().count('"type":"step"')
    except OSError:
        return -1

def run(args, when=None, sig=None):
    """Runs cubot; `when()` (polled) says when to send `sig`."""
    p = subprocess.Popen([cubot] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    hung = False
    try:
        if when is not None:
            t0 = time.monotonic()
            while p.poll() is None and time.monotonic() - t0 < LIMIT:
                if when(time.monotonic() - t0):
                    p.send_signal(sig)
                    break
                time.sleep(0.002)
        out, err = p.communicate(timeout=LIMIT)
    except subprocess.TimeoutExpired:
        hung = True
        p.kill()
        out, err = p.communicate()
    lines = []
    for l in out.splitlines():
        try:
            lines.append(json.loads(l))
        except ValueError:
            pass
    return p.returncode, lines, err, hung

def case(i):
    r = random.Random(seed * 1_000_003 + i)
    robot = 'mindcub3r' if i % 2 == 0 else 'line'
    kind = r.choices(KINDS, WEIGHTS)[0]
    d = os.path.join(work, f'case-{i}')
    os.makedirs(d)
    res = {'case': i, 'robot': robot, 'kind': kind, 'panic': False, 'hang': False}
    faults = ''
    # The brick's lost replies, stalls, drop-outs and garbled replies land in a seeded
    # program (homing the arms, a scan face, a chunk of primitives, a face read by the
    # check: a run is about 70 programs); the line robot's at a command number.
    if kind == 'corrupt':
        faults = f'corrupt@{r.randint(3, 10)}' if robot == 'line' else f'corrupt@p{r.randint(1, 70)}'
    elif kind in ('drop', 'stall'):
        faults = f'{kind}@{r.randint(1, 14)}' if robot == 'line' else f'{kind}@p{r.randint(1, 70)}'
    elif kind == 'dropout':
        ms = r.choice([200, 1000, 5000])
        at = f'{r.randint(3, 10)}' if robot == 'line' else f'p{r.randint(1, 70)}'
        faults = f'dropout@{at}={ms}'
    sim_seed = 1000 + i
    sim = Sim(d, robot, sim_seed, faults)
    journal = os.path.join(d, 'j.jsonl')
    port = ['--port', sim.path, '--robot', robot]
    lo, hi = SPAN[robot]
    if kind in ('ctrl-c', 'sigkill', 'other-cube', 'foreign-cube'):
        sig = signal.SIGINT if kind == 'ctrl-c' else signal.SIGKILL
        if r.random() < 0.8:
            # A point in the execution: after k confirmed steps, then up to 0.15 s more
            # (mid-motion more often than not).
            k = r.randint(0, 14 if robot == 'line' else 60)
            extra = r.uniform(0, 0.15)
            fired = {}
            def when(t):
                if steps_in(journal) >= k:
                    fired.setdefault('at', t)
                return 'at' in fired and t >= fired['at'] + extra
        else:
            # Any moment, the scan included.
            t_sig = r.uniform(lo, hi)
            when = lambda t: t >= t_sig
        code, lines, err, hung = run(['run'] + port + RUN + ['--journal', journal], when, sig)
    else:
        code, lines, err, hung = run(['run'] + port + RUN + ['--journal', journal])
    res['hang'] |= hung
    res['panic'] |= code == 101 or 'panicked' in err
    truth, canon = sim.cube()
    last = lines[-1] if lines else {}
    res['first_exit'] = code
    if code == 0:
        # A fault the run rode out (a read sent again, a move read back, a link reopened),
        # or a stop that came after the end.
        res['panic'] |= sim.stop()
        fired = faults and (robot == 'line' and kind != 'stall'
                            or 'fault injected' in open(sim.err.name).read())
        res['outcome'] = 'recovered' if fired else 'finished'
        res['false_success'] = bool(last.get('reached_target')) and not solved(truth)
        res['ok'] = not res['false_success'] and not res['panic'] and not res['hang']
        return res
    if not os.path.exists(journal):
        # Stopped before execution began: nothing was claimed, nothing to resume.
        res['outcome'] = 'before-journal'
        res['ok'] = not res['panic'] and not res['hang'] and code in (2, 130, -9)
        res['panic'] |= sim.stop()
        return res
    # What the stop said (a killed process says nothing: its journal speaks at resume).
    stated = None
    if last.get('type') == 'interrupted':
        stated = [last['robot_state']] + last.get('robot_candidates', [])[1:]
        res['stated_right'] = any(names(s) == names(truth) for s in stated)
        res['named_candidates'] = len(stated)
    # Swap the cube before resuming?
    if kind in ('other-cube', 'foreign-cube'):
        sim.stop()
        palette = 'no-white' if kind == 'foreign-cube' else 'standard'
        sim = Sim(d, robot, sim_seed + 50_000, '', palette)
        truth, canon = sim.cube()
        port = ['--port', sim.path, '--robot', robot]
    res['resumes'] = 0
    while True:
        res['resumes'] += 1
        code, lines, err, hung = run(['run', '--resume', journal] + port + RUN)
        res['hang'] |= hung
        res['panic'] |= code == 101 or 'panicked' in err
        resumed = next((l for l in lines if l.get('type') == 'resumed'), None)
        if resumed and res['resumes'] == 1:
            cands = resumed['robot_candidates']
            res['journal_candidates'] = len(cands)
            if kind not in ('other-cube', 'foreign-cube'):
                res['journal_right'] = any(names(c) == names(truth) for c in cands)
                res['decided_right'] = names(resumed['robot_seen']) == names(truth)
                if stated is None:
                    res['stated_right'] = res['journal_right']
        after, canon_after = sim.cube()
        last = lines[-1] if lines else {}
        if code == 0:
            res['outcome'] = 'resumed-to-target' if solved(after) else 'false-success'
            break
        if code == 1:
            refused = 'not the journal' in err
            res['outcome'] = 'refused' if refused else 'no'
            res['moved_before_refusing'] = refused and canon_after != canon
            break
        if code == 2 and last.get('type') == 'interrupted' and res['resumes'] < 4:
            truth, canon = after, canon_after
            continue
        res['outcome'] = f'resume-exit-{code}'
        res['error'] = err.strip().splitlines()[-1:] if err.strip() else []
        break
    res['panic'] |= sim.stop()
    good_end = (res['outcome'] == 'resumed-to-target'
                or (res['outcome'] == 'refused' and kind == 'foreign-cube'
                    and not res['moved_before_refusing']))
    res['ok'] = (good_end and not res['panic'] and not res['hang']
                 and res.get('stated_right', True) and res.get('decided_right', True))
    return res

results = []
with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
    for res in ex.map(case, range(cases)):
        results.append(res)
        if not res['ok']:
            print('case', json.dumps(res), file=sys.stderr)
with open(os.path.join(os.getcwd(), 'target', 'stop-campaign.jsonl'), 'w') as f:
    for res in results:
        f.write(json.dumps(res) + '\n')

def count(pred):
    return sum(1 for x in results if pred(x))
interrupted = [x for x in results if x['outcome'] not in ('finished', 'recovered')]
judged = [x for x in results if 'stated_right' in x]
decided = [x for x in results if 'decided_right' in x]
resumed = [x for x in results if x.get('resumes')]
summary = {
    'type': 'stop-campaign', 'cases': len(results), 'seed': seed,
    'interrupted': len(interrupted),
    'interruptions': len(interrupted) + count(lambda x: x['outcome'] == 'recovered'),
    'by_kind': {k: count(lambda x, k=k: x['kind'] == k) for k in KINDS},
    'by_robot': {k: count(lambda x, k=k: x['robot'] == k) for k in ('mindcub3r', 'line')},
    'faults_ridden_out': count(lambda x: x['outcome'] == 'recovered'),
    'finished_before_the_stop': count(lambda x: x['outcome'] == 'finished'),
    'stopped_before_the_journal': count(lambda x: x['outcome'] == 'before-journal'),
    'stops_in_execution': len(resumed),
    'stated_right': f"{count(lambda x: x.get('stated_right'))}/{len(judged)}",
    'stated_with_candidates': count(lambda x: x.get('journal_candidates', 1) > 1 or x.get('named_candidates', 1) > 1),
    'decided_right': f"{count(lambda x: x.get('decided_right'))}/{len(decided)}",
    'resumed_to_target': f"{count(lambda x: x['outcome'] == 'resumed-to-target')}/{len(resumed)}",
    'refused_before_moving': f"{count(lambda x: x['outcome'] == 'refused' and not x.get('moved_before_refusing'))}/{count(lambda x: x['kind'] == 'foreign-cube' and x.get('resumes'))}",
    'other_endings': count(lambda x: x.get('resumes') and x['outcome'] not in ('resumed-to-target', 'refused')),
    'panics': count(lambda x: x['panic']),
    'hangs': count(lambda x: x['hang']),
    'false_successes': count(lambda x: x.get('false_success') or x['outcome'] == 'false-success'),
    'cases_wrong': count(lambda x: not x['ok']),
}
print(json.dumps(summary))
sys.exit(1 if summary['cases_wrong'] else 0)
PY
