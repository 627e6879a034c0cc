#!/usr/bin/env bash
# Stop-and-resume campaign: a robot simulator as its own process (`cubot sim --pty`, its own
# cube, kept in a state file that only this script reads) and `cubot run --port` driving it,
# interrupted at seeded random points: Ctrl-C, SIGKILL, a lost reply, a stall, a corrupted
# reply byte, a link drop-out, and the cube swapped for another state of it or for a cube of
# other colours before the resume. Both robots. A signal lands after a seeded number of
# confirmed steps plus up to 0.15 s (four cases in five; on the firmware brick a seeded share
# of the plan's steps plus up to one chunk's wall time), or at a seeded moment from start-up
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
# BRICK=lms2012 runs the MindCub3r on LEGO's own firmware (`cubot sim --brick lms2012`, the
# build in $LMS2012_DIR or target/lms2012, from scripts/firmware-brick.sh) instead of
# cubot's simulated brick: every case is a MindCub3r, at the speed the firmware brick
# sustains ($SPEED, default 2: it runs LEGO's VM and d_pwm's 2 ms ticks in virtual time,
# about 2x real time with two cases on a loaded 2-core machine) and time limits grown to
# match (a process counts as hung after $LIMIT wall seconds, default 600: a whole run
# takes 90-105 s there, and a run that catches a world fault runs the job again after
# re-scans; 300 s cut one such run short while it still worked). `stall` is left out there (a fault of our brick: LEGO's firmware
# refuses it), and two world faults join the kinds: `short-turn` (a tight cube: the K-th
# layer turn ends DEG degrees short) and `tilt-fail` (the K-th tilt does not roll the
# cube). A world fault is not a stop: the run must catch it (the check after execution,
# or a stop before it claims anything), never end with a false success. A stop it
# caused is resumed once the cube is squared by hand, as the stop says (the simulator
# starts again on the cube as squared, the fault gone); the stated state (the cube as
# squared), the resume's reading and its end are reported on their own (`world`), not in
# the stops' figures. WORLD=1 adds the world faults on our brick too (default: our brick's
# campaign as before).
#
# KINDS=k1,k2 draws only those kinds (for example KINDS=short-turn,tilt-fail).
#
# Usage: [BRICK=ours|lms2012] scripts/stop-campaign.sh [CASES (default 240)] [SEED (default 1)]
#        [JOBS (default 2)]
# Every case's line goes to target/stop-campaign.jsonl as it ends, and the files of every
# case that went wrong (the runs' output, the simulator's log, the journal) to
# target/stop-campaign-failed/. SUMMARY=FILE [BRICK=...] scripts/stop-campaign.sh prints the
# figures of such a file (a campaign cut short included) without running anything.
# Uses $CUBOT if set, else target/release/cubot (built if missing). Needs python3.
set -euo pipefail
cd "$(dirname "$0")/.."
CASES=${1:-240}
SEED=${2:-1}
JOBS=${3:-2}
BRICK=${BRICK:-ours}
case "$BRICK" in
    ours) WORLD=${WORLD:-0} ;;
    lms2012)
        WORLD=${WORLD:-1}
        LMS2012_DIR=${LMS2012_DIR:-target/lms2012}
        [ -x "$LMS2012_DIR/bin/lms2012" ] || scripts/firmware-brick.sh ;;
    *) echo "BRICK must be ours or lms2012, not $BRICK" >&2; exit 2 ;;
esac
CUBOT=${CUBOT:-target/release/cubot}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
if [ -z "${SUMMARY:-}" ]; then
    [ -x "$CUBOT" ] || cargo build --release --quiet
    # Solver tables once, before cases run in parallel.
    "$CUBOT" run --sim --robot line --speed 5000 --search-ms 0 -q --journal "$WORK/warm.jsonl" \
        >/dev/null 2>&1 || true
fi

SUMMARY=${SUMMARY:-} BRICK=$BRICK WORLD=$WORLD LMS2012_DIR=${LMS2012_DIR:-} SPEED=${SPEED:-} LIMIT=${LIMIT:-} \
python3 - "$CUBOT" "$WORK" "$CASES" "$SEED" "$JOBS" <<'PY'
import concurrent.futures, json, os, random, shutil, signal, subprocess, sys, time
cubot, work, cases, seed, jobs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
BRICK, WORLD = os.environ['BRICK'], os.environ['WORLD'] == '1'
SUMMARY_RUN = bool(os.environ.get('SUMMARY'))
FIRMWARE = BRICK == 'lms2012'
# Seconds a process may take before it counts as hung.
LIMIT = float(os.environ.get('LIMIT') or (600 if FIRMWARE else 150))
SPEED = {'mindcub3r': float(os.environ.get('SPEED') or (2 if FIRMWARE else 100)), 'line': 2}
# Wall seconds over which a signal sent at any moment lands (start-up, scan, execution).
SPAN = {'mindcub3r': (0.5, 40.0) if FIRMWARE else (0.2, 6.0), 'line': (0.2, 3.0)}
# Wall seconds the robot gets to come to rest after its host stopped (it finishes what it
# was sent), and the gap between the two looks that find it at rest.
REST, GAP = (90, 0.3) if FIRMWARE else (10, 0.05)
KINDS = ['ctrl-c', 'sigkill', 'drop', 'stall', 'corrupt', 'dropout', 'other-cube', 'foreign-cube']
WEIGHTS = [26, 26, 8, 10, 10, 8, 6, 6]
WORLD_KINDS = ['short-turn', 'tilt-fail']
if FIRMWARE:
    KINDS.remove('stall')
    WEIGHTS = [26, 26, 8, 10, 8, 6, 6]
if WORLD:
    KINDS += WORLD_KINDS
    WEIGHTS += [6, 6]
if os.environ.get('KINDS') and not SUMMARY_RUN:
    only = os.environ['KINDS'].split(',')
    unknown = [k for k in only if k not in KINDS]
    if unknown:
        sys.exit(f'KINDS: {", ".join(unknown)} not among {", ".join(KINDS)}')
    WEIGHTS = [w for k, w in zip(KINDS, WEIGHTS) if k in only]
    KINDS = [k for k in KINDS if k in only]
RUN = ['--search-ms', '0', '--solutions', '3', '--json', '-q']
# The files of the cases that went wrong.
KEPT = os.path.join(os.getcwd(), 'target', 'stop-campaign-failed')
SUMMARY = os.environ.get('SUMMARY')
if not SUMMARY:
    shutil.rmtree(KEPT, ignore_errors=True)

def names(s):
    """A facelet string with colours renamed in order of first appearance."""
    m = {}
    return ''.join(m.setdefault(c, chr(97 + len(m))) for c in s)

def solved(s):
    n = len(s) // 6
    return all(len(set(s[i * n:(i + 1) * n])) == 1 for i in range(6))

class Sim:
    def __init__(self, d, robot, sim_seed, faults, palette='standard', start=None):
        self.state = os.path.join(d, f'state-{sim_seed}-{palette}{"-squared" if start else ""}.txt')
        args = [cubot, 'sim', '--pty', '--robot', robot, '--seed', str(sim_seed), '--speed',
                str(SPEED[robot]), '--palette', palette, '--state-file', self.state]
        if start:
            args += ['--start', start]
        if FIRMWARE:
            args += ['--brick', 'lms2012']
            if os.environ.get('LMS2012_DIR'):
                args += ['--lms2012', os.environ['LMS2012_DIR']]
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
        while time.monotonic() - t0 < REST:
            try:
                lines = open(self.state).read().split('\n')
                if lines[2] == 'idle':
                    time.sleep(GAP)
                    again = open(self.state).read().split('\n')
                    if again[2] == 'idle' and again[0] == lines[0]:
                        return lines[0], lines[1]
            except (OSError, IndexError):
                pass
            time.sleep(0.05)
        return None, None
    def log(self):
        return open(self.err.name).read()
    def stop(self):
        self.p.kill()
        self.p.wait()
        self.err.close()
        return 'panicked' in self.log()

def steps_in(journal):
    try:
        return open(journal).read().count('"type":"step"')
    except OSError:
        return -1

def plan_length(journal):
    """The number of actions of the plan a journal starts with (None before it is written)."""
    try:
        with open(journal) as f:
            first = f.readline()
        return len(json.loads(first)['plan']) if first.endswith('\n') else None
    except (OSError, ValueError, KeyError):
        return None

def run(args, when=None, sig=None, keep=None):
    """Runs cubot; `when()` (polled) says when to send `sig`; its output goes to `keep`."""
    p = subprocess.Popen([cubot] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    hung = False
    started = time.monotonic()
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
    wall.append(time.monotonic() - started)
    if keep:
        with open(keep, 'w') as f:
            f.write(f'$ cubot {" ".join(args)}\n# exit {p.returncode} after '
                    f'{time.monotonic() - started:.1f} s{" (hung: killed)" if hung else ""}\n'
                    f'{out}\n# stderr\n{err}')
    lines = []
    for l in out.splitlines():
        try:
            lines.append(json.loads(l))
        except ValueError:
            pass
    return p.returncode, lines, err, hung

wall = []   # every process's wall seconds (list.append is atomic)

class NeverAtRest(Exception):
    pass

def case(i):
    d = os.path.join(work, f'case-{i}')
    try:
        res = one_case(i)
    except NeverAtRest as e:
        shutil.copytree(d, os.path.join(KEPT, f'case-{i}'), dirs_exist_ok=True)
        shutil.rmtree(d, ignore_errors=True)
        return {'case': i, 'robot': 'mindcub3r' if FIRMWARE or i % 2 == 0 else 'line',
                'kind': str(e), 'outcome': 'never-at-rest', 'panic': False, 'hang': False,
                'ok': False}
    if not res['ok']:
        # What a failure left (the runs' output, the simulator's log, the journal, the
        # simulator's cube): small files, kept for a look.
        shutil.copytree(d, os.path.join(KEPT, f'case-{i}'), dirs_exist_ok=True)
    shutil.rmtree(d, ignore_errors=True)
    return res

def one_case(i):
    r = random.Random(seed * 1_000_003 + i)
    kind = r.choices(KINDS, WEIGHTS)[0]
    # The world's faults are the MindCub3r's (the line robot has no tilts, no tray).
    robot = 'mindcub3r' if FIRMWARE or i % 2 == 0 or kind in WORLD_KINDS else 'line'

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
    elif kind == 'short-turn':
        faults = f'short-turn@{r.randint(1, 20)}={r.randint(5, 45)}'
    elif kind == 'tilt-fail':
        faults = f'tilt-fail@{r.randint(1, 30)}'
    world = kind in WORLD_KINDS
    sim_seed = 1000 + i
    sim = Sim(d, robot, sim_seed, faults)
    journal = os.path.join(d, 'j.jsonl')
    port = ['--port', sim.path, '--robot', robot]
    lo, hi = SPAN[robot]
    if kind in ('ctrl-c', 'sigkill', 'other-cube', 'foreign-cube'):
        sig = signal.SIGINT if kind == 'ctrl-c' else signal.SIGKILL
        if r.random() < 0.8:
            # A point in the execution: after k confirmed steps, then up to 0.15 s more
            # (mid-motion more often than not). On the firmware brick k is that share of
            # the plan the journal holds (so that it never lies past the plan's end), and
            # the extra time up to one chunk of its wall time (a second of brick time
            # at its speed).
            k = r.randint(0, 14 if robot == 'line' else 60)
            extra = r.uniform(0, 0.15)
            if FIRMWARE:
                share, extra = k / 61, extra / 0.15 / SPEED[robot]
            fired = {}
            def when(t):
                n = steps_in(journal)
                if FIRMWARE and 'k' not in fired:
                    length = plan_length(journal)
                    if length is None:
                        return False
                    fired['k'] = int(share * length)
                if n >= fired.get('k', k):
                    fired.setdefault('at', t)
                return 'at' in fired and t >= fired['at'] + extra
        else:
            # Any moment, the scan included.
            t_sig = r.uniform(lo, hi)
            when = lambda t: t >= t_sig
        code, lines, err, hung = run(['run'] + port + RUN + ['--journal', journal], when, sig,
                                     os.path.join(d, 'run-0.txt'))
    else:
        code, lines, err, hung = run(['run'] + port + RUN + ['--journal', journal],
                                     keep=os.path.join(d, 'run-0.txt'))
    res['hang'] |= hung
    res['panic'] |= code == 101 or 'panicked' in err
    truth, canon = sim.cube()
    if truth is None:
        sim.stop()
        raise NeverAtRest(kind)
    last = lines[-1] if lines else {}
    res['first_exit'] = code
    if code not in (0, -9):
        # Why the first run ended (a stop asked for, or one of its own).
        res['first_error'] = err.strip().splitlines()[-1][:300] if err.strip() else ''
    if world:
        log = sim.log()
        res['fault'] = faults
        res['fired'] = 'fault: layer turn' in log or 'fault: tilt' in log
        res['caught'] = code != 0 or solved(truth)
        res['last_line'] = last.get('type')
        res['error'] = err.strip().splitlines()[-1:] if err.strip() else []
    if code == 0:
        # A fault the run rode out (a read sent again, a move read back, a link reopened),
        # or a stop that came after the end.
        res['panic'] |= sim.stop()
        fired = faults and (robot == 'line' and kind != 'stall'
                            or 'fault injected' in open(sim.err.name).read())
        if world:
            fired = res['fired']
        res['outcome'] = 'recovered' if fired else 'finished'
        res['false_success'] = bool(last.get('reached_target')) and not solved(truth)
        res['ok'] = not res['false_success'] and not res['panic'] and not res['hang']
        return res
    if not os.path.exists(journal):
        # Stopped before execution began: nothing was claimed, nothing to resume.
        res['outcome'] = 'before-journal'
        # A world fault in the scan may leave it in doubt: a well-formed no (exit 1) before
        # anything was claimed catches it too.
        res['ok'] = (not res['panic'] and not res['hang']
                     and (code in (2, 130, -9) or (world and code == 1)))
        res['panic'] |= sim.stop()
        return res
    # What the stop said (a killed process says nothing: its journal speaks at resume).
    stated = None
    if last.get('type') == 'interrupted':
        stated = [last['robot_state']] + last.get('robot_candidates', [])[1:]
        res['stated_right'] = any(names(s) == names(truth) for s in stated)
        res['named_candidates'] = len(stated)
    # A world fault that stopped the run: the person squares the cube by hand, as the stop
    # says (the simulator starts again on the cube as squared, no fault left), then resumes.
    if world:
        sim.stop()
        sim = Sim(d, robot, sim_seed, '', start=truth)
        port = ['--port', sim.path, '--robot', robot]
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
        code, lines, err, hung = run(['run', '--resume', journal] + port + RUN,
                                     keep=os.path.join(d, f'run-{res["resumes"]}.txt'))
        res['hang'] |= hung
        res['panic'] |= code == 101 or 'panicked' in err
        resumed = next((l for l in lines if l.get('type') == 'resumed'), None)
        if resumed and res['resumes'] == 1:
            cands = resumed['robot_candidates']
            res['journal_candidates'] = len(cands)
            if kind not in ('other-cube', 'foreign-cube'):
                res['journal_right'] = any(names(c) == names(truth) for c in cands)
            if kind not in ('other-cube', 'foreign-cube') and not world:
                # (A squared cube's simulator started again with its turntable at its
                # start: the resume sees the cube turned whole, and plans from that.)
                res['decided_right'] = names(resumed['robot_seen']) == names(truth)
                if stated is None:
                    res['stated_right'] = res['journal_right']
        after, canon_after = sim.cube()
        if after is None:
            sim.stop()
            raise NeverAtRest(kind)
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
    if world:
        # Not a stop: the run had to catch it; what its stop stated and what the resume
        # made of a cube the world put out of square are reported on their own.
        for key in ('stated_right', 'decided_right', 'journal_right'):
            if key in res:
                res['world_' + key] = res.pop(key)
        res['ok'] = (res['caught'] and res['outcome'] != 'false-success'
                     and not res['panic'] and not res['hang']
                     and (not res.get('resumes') or res['outcome'] == 'resumed-to-target')
                     and res.get('world_stated_right', True))
        return res
    res['ok'] = (good_end and not res['panic'] and not res['hang']
                 and res.get('stated_right', True) and res.get('decided_right', True))
    return res

results = []
if SUMMARY:
    results = [json.loads(l) for l in open(SUMMARY) if l.strip()]
    # The kinds a file holds (a campaign of the other brick, or with WORLD set).
    KINDS += [k for k in dict.fromkeys(x['kind'] for x in results) if k not in KINDS]
else:
    # One line per case as it ends (in case order), so that a campaign cut short still
    # has its figures.
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex, \
            open(os.path.join(os.getcwd(), 'target', 'stop-campaign.jsonl'), 'w') as f:
        for res in ex.map(case, range(cases)):
            results.append(res)
            f.write(json.dumps(res) + '\n')
            f.flush()
            if not res['ok']:
                print('case', json.dumps(res), file=sys.stderr)

def count(pred, among=None):
    return sum(1 for x in (results if among is None else among) if pred(x))
worlds = [x for x in results if x['kind'] in WORLD_KINDS]
results_all, results = results, [x for x in results if x['kind'] not in WORLD_KINDS]
interrupted = [x for x in results if x['outcome'] not in ('finished', 'recovered')]
judged = [x for x in results if 'stated_right' in x]
decided = [x for x in results if 'decided_right' in x]
resumed = [x for x in results if x.get('resumes')]
summary = {
    'type': 'stop-campaign', 'brick': BRICK, 'speed': SPEED['mindcub3r'], 'limit_s': LIMIT,
    'cases': len(results_all), 'seed': None if SUMMARY else seed,
    'interrupted': len(interrupted),
    'interruptions': len(interrupted) + count(lambda x: x['outcome'] == 'recovered'),
    'by_kind': {k: count(lambda x, k=k: x['kind'] == k, results_all) for k in KINDS},
    'by_robot': {k: count(lambda x, k=k: x['robot'] == k, results_all) for k in ('mindcub3r', 'line')},
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
    'panics': count(lambda x: x['panic'], results_all),
    'hangs': count(lambda x: x['hang'], results_all),
    'false_successes': count(lambda x: x.get('false_success') or x['outcome'] == 'false-success', results_all),
    'never_at_rest': count(lambda x: x['outcome'] == 'never-at-rest', results_all),
    'cases_wrong': count(lambda x: not x['ok'], results_all),
    'longest_process_s': round(max(wall, default=0), 1),
}
if worlds:
    summary['world'] = {
        'cases': len(worlds),
        'fired': count(lambda x: x.get('fired'), worlds),
        'caught': f"{count(lambda x: x.get('fired') and x.get('caught'), worlds)}/{count(lambda x: x.get('fired'), worlds)}",
        'stopped': count(lambda x: x.get('fired') and x['first_exit'] != 0, worlds),
        'ended_at_target_by_itself': count(lambda x: x.get('fired') and x['first_exit'] == 0, worlds),
        'stated_right': f"{count(lambda x: x.get('world_stated_right'), worlds)}/{count(lambda x: 'world_stated_right' in x, worlds)}",
        'decided_right': f"{count(lambda x: x.get('world_decided_right'), worlds)}/{count(lambda x: 'world_decided_right' in x, worlds)}",
        'resumed_to_target': f"{count(lambda x: x['outcome'] == 'resumed-to-target', worlds)}/{count(lambda x: x.get('resumes'), worlds)}",
        'resume_endings': {o: count(lambda x, o=o: x['outcome'] == o, worlds)
                           for o in sorted({x['outcome'] for x in worlds if x.get('resumes')})},
        'false_successes': count(lambda x: x.get('false_success') or x['outcome'] == 'false-success', worlds),
    }
print(json.dumps(summary))
sys.exit(1 if summary['cases_wrong'] else 0)
PY
