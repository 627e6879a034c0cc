// cubot's live view. Every message from the command (an EventSource stream of JSON objects,
// each with `type` and `t`, its Unix time in ms) is folded into one state and the panels it
// touches are drawn again as SVG. Colours are drawn as measured; every sticker also carries
// its face letter. Nothing is loaded from elsewhere.
'use strict';

const SVGNS = 'http://www.w3.org/2000/svg';
const FACES = 'URFDLB';
// Where each face sits in the unfolded net (column, row, in faces), URFDLB order.
const NET = [[1, 0], [2, 1], [1, 1], [1, 2], [0, 1], [3, 1]];
const $ = (id) => document.getElementById(id);

function fresh() {
  return {
    hello: null, phase: '', scale: null, readings: {}, rawMax: [1, 1, 1], frame: null,
    resolution: null, scanned: null, palette: {}, plan: null, exec: null, checks: [],
    stopped: null, summary: null, ended: null, calibration: null, journal: null,
  };
}
let S = fresh();
// What the browser test reads: how late each live message was shown (ms), the first state.
const probe = { lags: [], maxLag: 0, worst: {}, firstShown: null, count: 0, types: {}, opened: Infinity };
window.cubotView = probe;
let replaying = false;

// ---- colours -------------------------------------------------------------------------
function hex(r, g, b) {
  const c = (v) => Math.max(0, Math.min(255, Math.round(v))).toString(16).padStart(2, '0');
  return '#' + c(r) + c(g) + c(b);
}
function labHex(lab) {
  if (!lab) return '#888888';
  const [L, a, b] = lab;
  const fy = (L + 16) / 116, fx = fy + a / 500, fz = fy - b / 200;
  const inv = (t) => (t ** 3 > 0.008856 ? t ** 3 : (t - 16 / 116) / 7.787);
  const X = 0.95047 * inv(fx), Y = inv(fy), Z = 1.08883 * inv(fz);
  const lin = [3.2406 * X - 1.5372 * Y - 0.4986 * Z, -0.9689 * X + 1.8758 * Y + 0.0415 * Z,
    0.0557 * X - 0.204 * Y + 1.057 * Z];
  const g = lin.map((v) => (v <= 0.0031308 ? 12.92 * v : 1.055 * v ** (1 / 2.4) - 0.055) * 255);
  return hex(g[0], g[1], g[2]);
}
// A raw reading drawn as read: camera sRGB as it is, other scales against the brightest
// reading of each channel so far (a rough white balance, until the resolver's colours come).
function readingHex(v) {
  if (S.scale === 'rgb8') return hex(v[0], v[1], v[2]);
  if (S.scale === 'unit') return hex(v[0] * 255, v[1] * 255, v[2] * 255);
  return hex(v[0] / S.rawMax[0] * 255, v[1] / S.rawMax[1] * 255, v[2] / S.rawMax[2] * 255);
}
function inkFor(fill) {
  const n = parseInt(fill.slice(1), 16);
  const y = 0.299 * (n >> 16) + 0.587 * ((n >> 8) & 255) + 0.114 * (n & 255);
  return y > 140 ? '#000' : '#fff';
}
// The colour of a symbol (face letter) of the cube: its class mean, else the journal's.
function symbolHex(sym) {
  if (S.palette[sym]) return S.palette[sym];
  return '#999999';
}

// ---- drawing -------------------------------------------------------------------------
function el(name, attrs, parent) {
  const e = document.createElementNS(SVGNS, name);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}
function sizeOf(count) { return count === 24 ? 2 : 3; }
// An unfolded net: `cells[i]` = {fill, letter, cls, frame, title} for each facelet.
function netSvg(count, cells, data) {
  const n = sizeOf(count), cell = 10, gap = 1.5;
  const w = 4 * n * cell + 3 * gap + 2, h = 3 * n * cell + 2 * gap + 2;
  const svg = el('svg', { viewBox: `0 0 ${w} ${h}`, role: 'img' });
  for (const [k, v] of Object.entries(data || {})) svg.setAttribute('data-' + k, v);
  for (let i = 0; i < count; i++) {
    const f = Math.floor(i / (n * n)), k = i % (n * n);
    const x = 1 + NET[f][0] * (n * cell + gap) + (k % n) * cell;
    const y = 1 + NET[f][1] * (n * cell + gap) + Math.floor(k / n) * cell;
    const c = cells[i] || {};
    const g = el('g', { class: 'cell ' + (c.cls || ''), 'data-i': i, 'data-letter': c.letter || '' }, svg);
    el('title', {}, g).textContent = `${FACES[f]}${k + 1}` + (c.title ? ': ' + c.title : '');
    const fill = c.fill || '#bbbbbb';
    el('rect', { x: x + 0.3, y: y + 0.3, width: cell - 0.6, height: cell - 0.6, rx: 1, fill }, g);
    if (c.frame) {
      // A doubt: a magenta edge, the rival cube's colour inside it, its letter in the corner.
      // (The style, not the attribute: the sheet's stroke for cells would win over it.)
      el('rect', { class: 'doubt-edge', x: x + 0.5, y: y + 0.5, width: cell - 1, height: cell - 1 }, g);
      el('rect', { class: 'frame', x: x + 1.8, y: y + 1.8, width: cell - 3.6, height: cell - 3.6 }, g).style.stroke = c.frame;
    }
    if (c.mark) el('rect', { class: 'mark', x: x + 0.9, y: y + 0.9, width: cell - 1.8, height: cell - 1.8 }, g);
    if (c.letter) el('text', { x: x + cell / 2, y: y + cell / 2, fill: inkFor(fill) }, g).textContent = c.letter;
    if (c.rival) {
      el('text', { class: 'rival', x: x + cell - 1.6, y: y + cell - 1.8, fill: inkFor(fill) }, g).textContent = c.rival;
    }
  }
  return svg;
}
// A state string (face letters) as a net coloured by the cube's classes.
function stateNet(state, data) {
  const cells = [...state].map((s) => ({ fill: symbolHex(s), letter: s }));
  return netSvg(state.length, cells, Object.assign({ state }, data || {}));
}
function put(id, node) { const p = $(id); p.replaceChildren(); if (node) p.appendChild(node); }
function label(text) { const p = document.createElement('p'); p.className = 'net-label'; p.textContent = text; return p; }
function pct(p) { return p > 0.999 ? 'over 99.9 %' : (100 * p).toFixed(p > 0.99 ? 1 : 0) + ' %'; }
function secs(s) { return (s == null || !isFinite(s)) ? '–' : s.toFixed(1) + ' s'; }
function actionText(a) {
  if (a == null) return '?';
  if (typeof a.turns === 'string') return a.turns;
  const p = a.primitive || a;
  const arg = p.arg === undefined ? '' : ' ' + (typeof p.arg === 'number' && p.arg > 0 ? '+' + p.arg : p.arg);
  return String(p.op || JSON.stringify(p)).replace('-', ' ') + arg;
}

// ---- panels --------------------------------------------------------------------------
function drawScanner() {
  const idx = Object.keys(S.readings);
  if (!idx.length && !S.frame) return;
  const count = S.resolution ? S.resolution.stickers.length : (S.scanCount || 54);
  const letters = S.resolution ? S.resolution.cube : '';
  const cells = [];
  for (let i = 0; i < count; i++) {
    const r = S.readings[i];
    if (!r) { cells.push({ cls: 'empty' }); continue; }
    cells.push({ fill: readingHex(r.value), letter: letters[i] || '', cls: r.reads > 1 ? 'reread' : '',
      mark: r.reads > 1, title: `read ${r.reads}×: ${r.value.map((v) => v.toFixed(0)).join(' ')}` });
  }
  put('scan-net', netSvg(count, cells, { read: idx.length, rereads: idx.filter((i) => S.readings[i].reads > 1).length }));
  const rr = idx.filter((i) => S.readings[i].reads > 1).length;
  $('scan-text').textContent = `${idx.length} of ${count} stickers read` + (rr ? `, ${rr} read again (dashed)` : '');
}

function drawFrame() {
  const f = S.frame;
  if (!f) return;
  const seen = f.stickers.filter((s) => s.detected).length;
  const grid = !f.stickers.length ? 'none' : seen === f.stickers.length ? 'complete' : 'partial';
  const svg = el('svg', { viewBox: `0 0 ${f.width} ${f.height}`, 'data-face': f.face || '', 'data-stickers': f.stickers.length, 'data-grid': grid });
  if (f.frame) {
    // Fetched at once (a frame is kept a short while); shown once it has loaded.
    const img = el('image', { width: f.width, height: f.height }, svg);
    const load = new Image();
    load.onload = () => { img.setAttribute('href', load.src); svg.setAttribute('data-loaded', f.frame); };
    load.src = 'frame/' + f.frame;
  }
  f.stickers.forEach((s, k) => {
    const pts = s.quad.map((p) => p.join(',')).join(' ');
    el('polygon', { class: 'quad' + (s.detected ? '' : ' placed'), points: pts }, svg);
    const cx = s.quad.reduce((a, p) => a + p[0], 0) / 4, cy = s.quad.reduce((a, p) => a + p[1], 0) / 4;
    const r = Math.abs(s.quad[1][0] - s.quad[0][0]) / 5 + 4;
    el('circle', { class: 'sample', cx, cy, r, fill: hex(...s.rgb) }, svg);
    if (f.face) el('text', { class: 'frame-letter', x: cx, y: cy - r * 1.9 }, svg).textContent = f.face + (k + 1);
  });
  if (grid === 'none') {
    el('text', { class: 'frame-letter', x: f.width / 2, y: 24 }, svg).textContent = 'no cube found in this frame';
  }
  put('frame', svg);
  if (S.hello && S.hello.save) {
    $('scan-text').textContent = grid === 'complete' ? `all ${f.stickers.length} stickers found: Save stores them`
      : grid === 'partial' ? `${seen} of ${f.stickers.length} stickers found` : 'no cube found';
  }
}

function abPlot(stickers, classes, doubtful) {
  const size = 240, half = size / 2, k = half / 100;
  const svg = el('svg', { viewBox: `0 0 ${size} ${size}`, role: 'img', 'data-classes': classes.length });
  el('title', {}, svg).textContent = 'each sticker on the a*b* plane; rings: the six colour classes';
  el('line', { class: 'axis', x1: 0, y1: half, x2: size, y2: half }, svg);
  el('line', { class: 'axis', x1: half, y1: 0, x2: half, y2: size }, svg);
  el('text', { x: size - 14, y: half - 5, 'font-size': 9, fill: 'currentColor' }, svg).textContent = 'a*';
  el('text', { x: half + 4, y: 10, 'font-size': 9, fill: 'currentColor' }, svg).textContent = 'b*';
  const X = (a) => half + Math.max(-100, Math.min(100, a)) * k, Y = (b) => half - Math.max(-100, Math.min(100, b)) * k;
  stickers.forEach((s, i) => {
    if (s.read === false) return;
    el('circle', { class: 'dot' + (doubtful.includes(i) ? ' doubt' : ''), cx: X(s.lab[1]), cy: Y(s.lab[2]), r: 3.2, fill: labHex(s.lab) }, svg);
  });
  for (const c of classes) {
    const rad = Math.max(5, Math.hypot(c.spread[1], c.spread[2]) * k * 2);
    el('circle', { class: 'class-ring', cx: X(c.mean[1]), cy: Y(c.mean[2]), r: rad, stroke: labHex(c.mean) }, svg);
    el('text', { class: 'class-letter', x: X(c.mean[1]), y: Y(c.mean[2]) }, svg).textContent = c.face;
  }
  return svg;
}

function drawResolution() {
  const r = S.resolution;
  if (!r) return;
  $('resolution').hidden = false;
  const doubt = r.doubtful || [];
  const cells = r.stickers.map((s, i) => {
    const c = { fill: labHex(s.lab), letter: s.face, cls: s.read === false ? 'unread' : '',
      title: `${s.face}, margin ${s.margin.toFixed(1)} nats` + (s.runner_up ? `, else ${s.runner_up}` : '') };
    if (doubt.includes(i)) {
      const rival = r.rival ? r.rival[i] : (s.runner_up || '?');
      c.cls += ' doubt';
      c.frame = symbolHex(rival);
      c.rival = rival;
      c.title += `; the rival cube has ${rival} here`;
    }
    return c;
  });
  const net = netSvg(r.stickers.length, cells, { cube: r.cube, doubtful: doubt.join(','), confident: r.confident });
  net.querySelectorAll('.cell.doubt').forEach((g) => {
    const i = +g.getAttribute('data-i');
    g.setAttribute('data-rival', r.rival ? r.rival[i] : '');
  });
  put('resolved-net', net);
  $('verdict').textContent = (r.confident ? 'sure: ' : 'in doubt: ') +
    `best guess ${pct(r.probability)} likely, the closest rival ${r.cube_margin.toFixed(1)} nats behind` +
    (doubt.length ? `; ${doubt.length} stickers in doubt, framed in the rival cube's colours` : '');
  put('ab-plot', abPlot(r.stickers, r.classes, doubt));
}

let planItems = [];
let currentItem = null;
function drawPlan() {
  const p = S.plan;
  S.drawnDone = 0;
  planItems = [];
  currentItem = null;
  const ol = $('plan');
  ol.replaceChildren();
  if (!p) return;
  $('run').hidden = false;
  $('solution').textContent = `round ${p.round}: ${p.solution || '(nothing to turn)'} — ${p.actions.length} robot actions`;
  for (const a of p.actions) {
    const li = document.createElement('li');
    li.textContent = actionText(a);
    ol.appendChild(li);
    planItems.push(li);
  }
  drawExec();
}

function drawExec() {
  const p = S.plan, e = S.exec;
  if (!p) return;
  const len = p.actions.length;
  const k = e && e.round === p.round ? Math.max(0, Math.min(len, len - (e.total - e.done))) : 0;
  const bar = $('runbar');
  bar.max = Math.max(1, len);
  bar.value = k;
  bar.setAttribute('data-done', k);
  bar.setAttribute('data-total', len);
  $('progress-text').textContent = `round ${p.round}: action ${k} of ${len}`;
  if (currentItem) currentItem.classList.remove('current');
  // Only the items whose state changed since the last action (a step changes one).
  const from = Math.min(k, S.drawnDone || 0), to = Math.max(k, S.drawnDone || 0);
  for (let i = from; i < to && i < planItems.length; i++) planItems[i].classList.toggle('done', i < k);
  S.drawnDone = k;
  currentItem = planItems[k] || null;
  if (currentItem) {
    currentItem.classList.add('current');
    if (!replaying) currentItem.scrollIntoView({ block: 'nearest' });
  }
  const scale = (S.hello && S.hello.time_scale) || 1;
  const measured = e && e.round === p.round ? (e.t - p.t) / 1000 * scale : 0;
  // A simulator in the command's own process scales its clock (time_scale); anything else
  // (a robot, or a simulator on a port at a speed cubot does not know) is timed on the wall.
  const clock = scale === 1 ? " (this computer's clock)" : '';
  $('times').textContent = `robot time: predicted ${secs(e && e.round === p.round ? e.robot_seconds : 0)} of ${secs(p.robot_seconds)}, measured ${secs(measured)}${clock}`;
  const state = e && e.round === p.round ? e.state : p.state;
  if (state) showNow(state);
}

// The cube as it should be now: drawn once, then only the stickers an action moved change.
function showNow(state) {
  const svg = document.querySelector('#now-net svg');
  if (!svg || svg.getAttribute('data-state').length !== state.length) {
    const box = document.createElement('div');
    box.appendChild(label('the cube as it should be now'));
    box.appendChild(stateNet(state));
    put('now-net', box);
    return;
  }
  const old = svg.getAttribute('data-state');
  const cells = svg.querySelectorAll('g.cell');
  for (let i = 0; i < state.length; i++) {
    if (old[i] === state[i]) continue;
    const fill = symbolHex(state[i]);
    cells[i].setAttribute('data-letter', state[i]);
    cells[i].querySelector('rect').setAttribute('fill', fill);
    const t = cells[i].querySelector('text');
    t.textContent = state[i];
    t.setAttribute('fill', inkFor(fill));
  }
  svg.setAttribute('data-state', state);
}

function drawChecks() {
  const ol = $('checks');
  ol.replaceChildren();
  for (const c of S.checks) {
    const li = document.createElement('li');
    li.textContent = `check after round ${c.round} (${c.by}): ` + (c.at_target ? 'at the target' : 'NOT at the target') +
      (c.next === 'replan' ? '; solving again from what it saw' : '') + (c.reason ? `; stopping: ${c.reason}` : '');
    li.className = c.at_target ? 'good' : 'bad';
    ol.appendChild(li);
  }
}

function drawStopped() {
  const s = S.stopped;
  $('stopped').hidden = !s;
  if (!s) return;
  $('stop-reason').textContent = s.reason || '';
  $('stop-motors').textContent = s.motors_stopped === true ? 'The robot confirmed its motors stopped.'
    : s.motors_stopped === false ? 'The robot did NOT confirm that its motors stopped: switch it off.'
      : 'The motors were not asked to stop (nothing was moving).';
  $('resume').textContent = s.resume || '';
  const box = $('stop-nets');
  box.replaceChildren();
  const states = s.candidates && s.candidates.length ? s.candidates : (s.state ? [s.state] : []);
  box.appendChild(label(states.length > 1 ? `the cube is in one of ${states.length} states (the resume tells them apart):` : 'where the cube is:'));
  states.forEach((st, i) => box.appendChild(stateNet(st, { candidate: i })));
}

function drawSummary() {
  const s = S.summary;
  $('summary').hidden = !s;
  if (!s) return;
  $('summary-text').textContent = (s.reached_target ? 'Reached the target' : 'NOT at the target') +
    (s.solution ? ` — ${s.solution} (${s.face_turns} face turns, ${s.actions} robot actions, ${secs(s.robot_seconds)} planned)` : '') +
    (s.stopped ? `; stopped: ${s.stopped}` : '');
  $('summary-text').className = s.reached_target ? 'good' : 'bad';
}

function drawCalibration() {
  const c = S.calibration;
  if (!c) return;
  $('calibration').hidden = false;
  $('calibration-text').textContent = c.text || '';
  if (c.classes) put('calibration-plot', abPlot(c.stickers || [], c.classes, []));
}

function setPhase(p) {
  S.phase = p;
  const e = $('phase');
  e.textContent = p;
  e.setAttribute('data-phase', p);
}

function note(text) {
  const li = document.createElement('li');
  li.textContent = text;
  $('notes').appendChild(li);
}

// ---- folding messages ----------------------------------------------------------------
function fold(m) {
  switch (m.type) {
    case 'hello':
      S = fresh();
      S.hello = m;
      $('title').textContent = m.title || '';
      $('stop').hidden = !m.stop;
      $('save').hidden = !m.save;
      $('history').hidden = !m.history;
      $('calibration').hidden = !m.save;
      if (m.save) $('calibration-text').textContent = 'Move the camera or the cube until every sticker is outlined in solid green (dashed orange: placed from the grid, not seen), then press Save.';
      ['scan-net', 'frame', 'resolved-net', 'ab-plot', 'now-net', 'plan', 'checks', 'notes'].forEach((id) => $(id).replaceChildren());
      drawStopped(); drawSummary();
      $('resolution').hidden = true;
      $('run').hidden = true;
      setPhase('starting');
      // Listing reads the journals: at once for `cubot view`, on demand beside a run.
      if (m.history && !replaying) {
        if (!m.stop && !m.save) loadJournals();
        else {
          const b = document.createElement('button');
          b.type = 'button';
          b.textContent = 'list past runs';
          b.addEventListener('click', loadJournals);
          $('journals').replaceChildren(b);
        }
      }
      if (probe.firstShown === null) probe.firstShown = Date.now() - m.started;
      break;
    case 'phase': setPhase(m.phase); break;
    case 'scan-progress':
      if (S.phase !== 'check') setPhase('scan');
      S.scanCount = m.total > 1 ? m.total : S.scanCount;
      $('scan-text').textContent = `${m.done} of ${m.total} read`;
      break;
    case 'readings':
      if (S.phase !== 'check') setPhase('scan');
      S.scale = m.scale || S.scale;
      for (const r of m.readings) {
        // A re-read adds to the sticker's readings; a new scan (a check's) starts over.
        const old = S.readings[r.index];
        S.readings[r.index] = { value: r.value, reads: old && m.reread ? old.reads + 1 : 1 };
        for (let c = 0; c < 3; c++) S.rawMax[c] = Math.max(S.rawMax[c], r.value[c]);
      }
      later(drawScanner);
      break;
    case 'camera-frame': S.frame = m; later(drawFrame); break;
    case 'resolution':
      S.resolution = m;
      for (const c of m.classes) S.palette[c.face] = labHex(c.mean);
      drawResolution(); drawScanner();
      break;
    case 'scanned':
      S.scanned = m;
      setPhase('think');
      if (!S.resolution) { $('resolution').hidden = false; put('resolved-net', stateNet(m.state)); }
      break;
    case 'palette': for (const [sym, lab] of m.colors || []) S.palette[sym] = labHex(lab); break;
    case 'solved': case 'planned': setPhase('think'); if (m.type === 'planned') note(`plan: ${m.solution} (${m.actions} actions, ${secs(m.robot_seconds)})`); break;
    case 'executes': S.plan = m; S.exec = null; setPhase(m.round > 1 ? `execute, round ${m.round}` : 'execute'); drawPlan(); break;
    case 'executing': m.round = S.plan ? S.plan.round : 1; S.exec = m; later(drawExec); break;
    case 'verifying': setPhase('check'); note(`checking: ${m.by}`); break;
    case 'checked':
      S.checks.push(m); drawChecks(); $('run').hidden = false;
      setPhase(m.next === 'replan' ? 'another round' : m.at_target ? 'done' : 'check');
      break;
    case 'resumed': note(`resume: the cube is ${m.seen} (by ${m.by}): ${m.decision}`); break;
    case 'stopped': S.stopped = m; setPhase('stopped'); drawStopped(); $('stop').disabled = true; break;
    case 'summary': S.summary = m; setPhase(m.reached_target ? 'done' : 'ended off the target'); drawSummary(); break;
    case 'end':
      S.ended = m;
      if (m.exit !== 0 && S.phase !== 'stopped') setPhase(m.exit === 1 ? 'ended: no' : 'error');
      if (m.exit === 0 && S.phase !== 'done' && !S.summary) setPhase('done');
      if (m.message) note(m.message);
      $('stop').disabled = true;
      $('save').disabled = true;
      break;
    case 'calibration': S.calibration = m; drawCalibration(); break;
    case 'note': note(m.text || ''); break;
    case 'journal': S.journal = m; note(`journal ${m.name} (${m.robot}, ${m.created})`); break;
    case 'journal-open': openJournal(m.name); break;
    default: break;
  }
}

// The panels that change with every reading, frame or action are drawn once a frame, not
// once a message: a scan's burst of readings costs one drawing, and a hidden page none
// until it is shown again.
const dirty = new Set();
let drawnLater = [];
function later(draw) {
  dirty.add(draw);
  if (dirty.size === 1) requestAnimationFrame(flush);
}
function flush() {
  const draws = [...dirty];
  dirty.clear();
  for (const d of draws) d();
  const now = Date.now();
  for (const m of drawnLater) shown(m, now);
  drawnLater = [];
}
// How late a message was on the page: from the job's event to its drawing.
function shown(m, now) {
  const lag = now - m.t;
  probe.lags.push(lag);
  probe.maxLag = Math.max(probe.maxLag, lag);
  probe.worst[m.type] = Math.max(probe.worst[m.type] || 0, Math.round(lag));
}
function receive(m) {
  fold(m);
  probe.count++;
  probe.types[m.type] = (probe.types[m.type] || 0) + 1;
  // Lateness of the live messages only: those published after the stream opened (the
  // replay that opens it carries older ones).
  if (typeof m.t === 'number' && m.t >= probe.opened) {
    if (dirty.size) drawnLater.push(m);
    else shown(m, Date.now());
  }
}

// ---- the stream, Stop, Save, history -------------------------------------------------
let source = null;
function connect() {
  source = new EventSource('events');
  source.onopen = () => {
    if (probe.opened === Infinity) probe.opened = Date.now();
    $('conn').textContent = 'live';
    $('conn').setAttribute('data-conn', 'live');
  };
  source.onmessage = (ev) => { if (!replaying) { try { receive(JSON.parse(ev.data)); } catch (e) { note('bad message: ' + e); } } };
  source.onerror = () => {
    const ended = S.ended || S.stopped || S.summary;
    $('conn').textContent = ended ? 'the command has ended' : 'connection lost, retrying';
    $('conn').setAttribute('data-conn', ended ? 'ended' : 'lost');
    if (ended) source.close();
  };
}

$('stop').addEventListener('click', () => {
  $('stop').disabled = true;
  $('stop').textContent = 'Stopping…';
  fetch('stop', { method: 'POST' }).catch(() => note('the stop did not reach the command'));
});
$('save').addEventListener('click', () => {
  $('save').disabled = true;
  fetch('save', { method: 'POST' }).then(() => note('saving…')).catch(() => note('the save did not reach the command'));
});

function loadJournals() {
  fetch('journals').then((r) => r.json()).then((list) => {
    const ul = $('journals');
    ul.replaceChildren();
    if (!list.length) ul.textContent = 'no journals yet';
    for (const j of list) {
      const li = document.createElement('li');
      const b = document.createElement('button');
      b.type = 'button';
      b.textContent = 'replay';
      b.addEventListener('click', () => openJournal(j.name));
      li.appendChild(b);
      li.appendChild(document.createTextNode(`${new Date(j.modified * 1000).toLocaleString()} — ${j.robot || '?'}, ${j.actions} ${j.actions === 1 ? 'action' : 'actions'}, ${j.outcome} (${j.name})`));
      ul.appendChild(li);
    }
  }).catch(() => { $('journals').textContent = 'cannot list the journals'; });
}

// Replays a journal through the same folding as a live run, a step every 40 ms.
function openJournal(name) {
  fetch('journal/' + encodeURIComponent(name)).then((r) => (r.ok ? r.json() : r.text().then((t) => Promise.reject(t))))
    .then((events) => {
      replaying = true;
      const hello = Object.assign({}, S.hello, { stop: false, save: false, started: Date.now() });
      fold(hello);
      $('replaying').hidden = false;
      $('replaying').textContent = `replaying ${name}`;
      let k = 0, t = Date.now();
      const step = () => {
        for (let burst = 0; k < events.length && burst < 4; burst++) {
          const m = events[k++];
          t += 40;
          m.t = t;
          fold(m);
          if (m.type === 'executing') break;
        }
        if (k < events.length) setTimeout(step, 40);
        else $('replaying').textContent = `replayed ${name}`;
      };
      step();
    })
    .catch((e) => note(`cannot replay ${name}: ${e}`));
}

connect();
