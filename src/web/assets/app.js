// The pages of `ggp-run web`: one document whose views are picked by the address's `#` part.
// Everything shown comes from the JSON API under /api/ (see src/web/mod.rs).
'use strict';

const $ = (sel) => document.querySelector(sel);
const el = (tag, attrs = {}, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null) e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
};
const SVG = 'http://www.w3.org/2000/svg';
const svg = (tag, attrs = {}) => {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
};

// ---- API ----------------------------------------------------------------------------------------

async function api(path, body) {
  const options = body === undefined ? {} : {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  };
  const response = await fetch(path, options);
  const text = await response.text();
  let data;
  try { data = JSON.parse(text); } catch { data = { error: text }; }
  if (!response.ok) {
    const error = new Error(data.error || `${response.status} ${response.statusText}`);
    error.data = data;
    error.status = response.status;
    throw error;
  }
  return data;
}

function notice(message) {
  const n = $('#notice');
  n.textContent = message || '';
  n.hidden = !message;
}

// ---- Views --------------------------------------------------------------------------------------

let leaveView = () => {};

function show(view) {
  for (const v of document.querySelectorAll('.view')) v.hidden = v.id !== view;
  for (const a of document.querySelectorAll('nav a')) {
    a.classList.toggle('active', a.dataset.view === view);
  }
}

async function route() {
  leaveView();
  leaveView = () => {};
  notice('');
  const [view, ...rest] = location.hash.replace(/^#/, '').split('/');
  const arg = rest.map(decodeURIComponent).join('/');
  try {
    switch (view) {
      case 'editor': show('editor'); await openEditor(arg); break;
      case 'play': show('setup'); await openSetup(arg ? { game: arg } : edited()); break;
      case 'match': show('match'); openMatch(Number(arg)); break;
      case 'matches': show('matches'); await listMatches(); break;
      case 'replay': show('replay'); await openReplay(arg); break;
      case 'tournament': show('tournament'); await openTournament(arg); break;
      default: show('library'); await openLibrary();
    }
  } catch (e) {
    notice(e.message);
  }
}

// ---- Library ------------------------------------------------------------------------------------

let games = [];

async function loadGames() {
  games = (await api('/api/games')).games;
  return games;
}

async function openLibrary() {
  const tbody = $('#games tbody');
  let pending = true;
  for (let round = 0; pending && round < 120; round++) {
    if (!location.hash.match(/^(#library)?$/)) return;
    await loadGames();
    tbody.replaceChildren(...games.map((g) => {
      const d = g.described;
      const unknown = g.problem ? el('span', { class: 'problem', title: g.problem }, 'does not load') : '…';
      return el('tr', { 'data-game': g.name },
        el('td', {}, el('strong', {}, g.name)),
        el('td', { class: 'roles' }, d ? d.roles.join(', ') : unknown),
        el('td', { class: 'dynamics' }, d ? d.dynamics : ''),
        el('td', { class: 'engine' }, d ? d.engine : ''),
        el('td', { class: 'file' }, g.file),
        el('td', {},
          el('a', { class: 'play button', href: `#play/${encodeURIComponent(g.name)}` }, 'Play'), ' ',
          el('a', { class: 'edit button', href: `#editor/${encodeURIComponent(g.name)}` }, 'Edit')));
    }));
    pending = games.some((g) => !g.described && !g.problem);
    if (pending) await new Promise((r) => setTimeout(r, 1000));
  }
}

// ---- Editor -------------------------------------------------------------------------------------

const editor = { name: '', checkTimer: null, checked: 0 };

function edited() {
  return { text: $('#rules').value, syntax: $('#syntax').value, name: editor.name || 'your rules' };
}

async function openEditor(name) {
  if (name) {
    const game = await api(`/api/games/${encodeURIComponent(name)}`);
    $('#rules').value = game.text;
    $('#syntax').value = game.syntax;
    editor.name = game.name;
    if (game.style.problems.length) notice(`${game.name}.style: ${game.style.problems.join('; ')}`);
  }
  $('#editor-name').textContent = editor.name ? `— ${editor.name}` : '';
  syncConvertLabel();
  gutter();
  await check();
}

function syncConvertLabel() {
  $('#convert').textContent = $('#syntax').value === 'kif' ? 'Convert to infix' : 'Convert to KIF';
}

// Line numbers, each line with an error marked and its messages in the mark's tooltip.
function gutter(errors = new Map()) {
  const lines = $('#rules').value.split('\n').length;
  const g = $('#gutter');
  g.replaceChildren(...Array.from({ length: lines }, (_, i) => el('span', {
    class: errors.has(i + 1) ? 'line line-error' : 'line', 'data-line': i + 1, title: errors.get(i + 1),
  }, `${i + 1}\n`)));
  g.scrollTop = $('#rules').scrollTop;
}

async function check() {
  const ticket = ++editor.checked;
  const status = $('#check-status');
  status.textContent = 'checking…';
  let answer;
  try {
    answer = await api('/api/check', { text: $('#rules').value, syntax: $('#syntax').value, play: true });
  } catch (e) {
    if (ticket === editor.checked) status.textContent = e.message;
    return;
  }
  if (ticket !== editor.checked) return; // a newer check is on its way
  const list = $('#diagnostics');
  const errorLines = new Map();
  for (const d of answer.diagnostics.filter((d) => d.severity === 'error')) {
    const said = `${d.line}:${d.column}: ${d.message}${d.help ? ` (help: ${d.help})` : ''}`;
    errorLines.set(d.line, errorLines.has(d.line) ? `${errorLines.get(d.line)}\n${said}` : said);
  }
  list.replaceChildren(...answer.diagnostics.map((d) => el('li', {
    class: `diagnostic ${d.severity}`, 'data-line': d.line, 'data-column': d.column,
    onclick: () => select(d.line, d.column, d.end_line, d.end_column),
  },
  el('span', { class: 'place' }, `${d.line}:${d.column}`), ' ',
  el('span', { class: 'severity' }, d.severity), ': ',
  el('span', { class: 'message' }, d.message),
  d.help ? el('div', { class: 'help' }, `help: ${d.help}`) : '')));
  gutter(errorLines);
  const errors = errorLines.size ? answer.diagnostics.filter((d) => d.severity === 'error').length : 0;
  status.textContent = answer.ok
    ? `valid: roles ${answer.roles.join(', ')}; ${answer.rules} rules, ${answer.facts} facts${answer.play_test ? `; play-test: ${answer.play_test}` : ''}`
    : `${errors} error${errors === 1 ? '' : 's'}`;
  status.className = answer.ok ? 'status ok' : 'status bad';
}

function select(line, column, endLine, endColumn) {
  const text = $('#rules').value;
  const offset = (l, c) => {
    let at = 0;
    for (let i = 1; i < l; i++) at = text.indexOf('\n', at) + 1;
    return at + c - 1;
  };
  const area = $('#rules');
  area.focus();
  area.setSelectionRange(offset(line, column), Math.max(offset(line, column), offset(endLine, endColumn)));
}

function scheduleCheck() {
  gutter();
  clearTimeout(editor.checkTimer);
  editor.checkTimer = setTimeout(check, 400);
}

async function reformat(path, extra = {}) {
  try {
    const answer = await api(path, { ...edited(), ...extra });
    $('#rules').value = answer.text;
    if (answer.syntax) $('#syntax').value = answer.syntax;
    syncConvertLabel();
    await check();
  } catch (e) {
    notice(e.message);
  }
}

// ---- Match setup --------------------------------------------------------------------------------

const KINDS = ['human', 'mcts', 'id', 'mcs', 'alphabeta', 'random', 'legal', 'other…'];
let setupSource = null;

async function openSetup(source) {
  setupSource = null;
  $('#seats').replaceChildren(); // an earlier game's seats, until these rules are known
  let text = source.text;
  let syntax = source.syntax;
  if (source.game) {
    const game = await api(`/api/games/${encodeURIComponent(source.game)}`);
    ({ text, syntax } = game);
  }
  $('#setup-name').textContent = source.game || source.name;
  const checked = await api('/api/check', { text, syntax });
  if (!checked.ok) {
    notice('The rules have errors: open them in the editor to see where.');
    return;
  }
  setupSource = source;
  $('#seats').replaceChildren(...checked.roles.map((role, i) => {
    const select = el('select', { class: 'seat', 'data-role': role },
      ...KINDS.map((k) => el('option', { value: k }, k)));
    select.value = i === 0 ? 'human' : 'mcts';
    const other = el('input', { class: 'seat-other', placeholder: 'learned:FILE or http://host:port', hidden: '' });
    select.addEventListener('change', () => { other.hidden = select.value !== 'other…'; });
    return el('div', { class: 'seat-row' }, el('label', {}, el('span', { class: 'role' }, role), select), other);
  }));
}

async function startMatch(event) {
  event.preventDefault();
  if (!setupSource) return;
  const players = [...document.querySelectorAll('#seats .seat-row')].map((row) => {
    const kind = row.querySelector('select').value;
    return kind === 'other…' ? row.querySelector('input').value.trim() : kind;
  });
  const request = {
    players,
    startclock: Number($('#startclock').value),
    playclock: Number($('#playclock').value),
  };
  if (setupSource.game) request.game = setupSource.game;
  else Object.assign(request, { text: setupSource.text, syntax: setupSource.syntax });
  // One match per click: the button waits for the server's answer.
  $('#start').disabled = true;
  try {
    const created = await api('/api/matches', request);
    location.hash = `#match/${created.id}`;
  } catch (e) {
    notice(e.message);
  } finally {
    $('#start').disabled = false;
  }
}

// ---- A match ------------------------------------------------------------------------------------

const game = { id: 0, roles: [], seats: [], style: {}, drawing: null, text: '', pending: {}, chosen: null, timer: null };

async function styleOf(name) {
  try {
    return (await api(`/api/games/${encodeURIComponent(name)}`)).style.pieces || {};
  } catch {
    return {};
  }
}

function openMatch(id) {
  Object.assign(game, { id, roles: [], seats: [], style: {}, drawing: null, text: '', pending: {}, chosen: null });
  $('#match-title').textContent = `#${id}`;
  for (const e of ['#board', '#players', '#log', '#legal', '#turn']) $(e).replaceChildren();
  $('#result').textContent = '';
  $('#replay-link').hidden = true;
  $('#record-link').hidden = true;
  $('#undo').hidden = true;
  $('#stop').hidden = false;
  // The stream kept in the background closes once the new one is open: the match is never
  // without a watcher in between.
  const kept = background.get(id);
  background.delete(id);
  const source = new EventSource(`/api/matches/${id}/events`);
  if (kept) source.addEventListener('open', () => kept.close(), { once: true });
  const dropKept = () => { if (kept) kept.close(); };
  let ended = false;
  source.onmessage = (e) => {
    const ev = JSON.parse(e.data);
    if (ev.type === 'end') ended = true;
    onEvent(ev);
  };
  source.onerror = () => {
    if (source.readyState === EventSource.CLOSED) { dropKept(); notice('The match is no longer on the server.'); }
  };
  leaveView = () => {
    dropKept();
    clearInterval(game.timer);
    if (ended) source.close(); else keepWatching(id, source);
  };
}

// Matches this page left while they ran: their event streams stay open (the server stops a match
// nobody follows) until they end, so that a look at another view does not stop them. A few at most,
// the newest: a browser opens only six connections to a server.
const background = new Map();
const MOST_IN_BACKGROUND = 2;

function keepWatching(id, source) {
  source.onmessage = (e) => {
    if (JSON.parse(e.data).type === 'end') { source.close(); background.delete(id); }
  };
  source.onerror = () => { if (source.readyState === EventSource.CLOSED) background.delete(id); };
  background.set(id, source);
  while (background.size > MOST_IN_BACKGROUND) {
    const [oldest, stream] = background.entries().next().value;
    stream.close();
    background.delete(oldest);
  }
}

function onEvent(ev) {
  switch (ev.type) {
    case 'starting':
      game.roles = ev.roles;
      game.seats = ev.seats;
      $('#match-title').textContent = `#${game.id}: ${ev.game}`;
      styleOf(ev.game).then((s) => { game.style = s; redraw(); });
      $('#players').replaceChildren(...ev.roles.map((role, i) => el('div', { class: 'player', 'data-role': role },
        el('h3', {}, `${role}: `, el('span', { class: 'name' }, ev.seats[i])),
        el('div', { class: 'effort' }), el('table', { class: 'candidates' }))));
      break;
    case 'ready':
      if (ev.problem) log(`${game.roles[ev.role]} could not start: ${ev.problem}`);
      break;
    case 'state':
      game.drawing = ev.drawing;
      game.text = ev.text;
      game.step = ev.step;
      redraw();
      break;
    case 'turn': {
      // A selection made on the board stays while another role a person plays here is asked.
      const before = humanTurn();
      game.pending[ev.role] = ev;
      if (!before || before.role === ev.role || humanTurn().role !== before.role) game.chosen = null;
      // What is left of the turn: less than its clock when the event is replayed after a reload
      // (the page's and the server's clocks may differ, so never more than the clock).
      startCountdown(ev.ends_at_ms ? Math.min(ev.clock_ms, Math.max(0, ev.ends_at_ms - Date.now())) : ev.clock_ms);
      redraw();
      break;
    }
    case 'thinking':
      panel(ev.role, '.effort').textContent = `thinking: ${ev.line}`;
      break;
    case 'moves':
      game.pending = {};
      stopCountdown();
      for (const m of ev.moves) {
        if (ev.mover !== null && ev.mover !== undefined && m.role !== ev.mover) continue;
        const role = game.roles[m.role];
        log(`${ev.step}. ${role} plays ${m.move}` + (m.violation ? ` (replaced: ${m.violation})` : '') +
          ` in ${(m.took_ms / 1000).toFixed(2)} s`);
        panel(m.role, '.effort').textContent = m.effort || '';
        showCandidates(m);
      }
      break;
    case 'rejected':
      // The turn is offered again next; the reason stays in the notice above it.
      notice(`${game.roles[ev.role]}: ${ev.error}`);
      break;
    case 'takenback':
      game.pending = {};
      log(ev.step === null
        ? `${game.roles[ev.role]} has no move to take back`
        : `${game.roles[ev.role]} takes back a move`);
      break;
    case 'finished':
      game.pending = {};
      $('#result').textContent = `${ev.result} (${game.roles.map((r, i) => `${r} ${ev.goals[i]}`).join(', ')})`;
      break;
    case 'aborted':
      game.pending = {};
      $('#result').textContent = `The match stopped: ${ev.reason}.`;
      break;
    case 'error':
      $('#result').textContent = ev.message;
      break;
    case 'end':
      stopCountdown();
      $('#stop').hidden = true;
      $('#undo').hidden = true;
      $('#replay-link').href = `#replay/match/${game.id}`;
      $('#replay-link').hidden = false;
      $('#record-link').href = `/api/matches/${game.id}/record`;
      $('#record-link').hidden = false;
      leaveView();
      leaveView = () => {};
      break;
    default:
      break;
  }
  if (ev.type !== 'thinking') redrawTurn();
}

function panel(role, part) {
  return document.querySelector(`#players .player:nth-child(${role + 1}) ${part}`) || el('div');
}

function showCandidates(m) {
  const table = panel(m.role, '.candidates');
  if (!m.candidates || !m.candidates.length) { table.replaceChildren(); return; }
  const best = [...m.candidates].sort((a, b) => b.visits - a.visits || (b.value ?? -1) - (a.value ?? -1)).slice(0, 8);
  table.replaceChildren(
    el('tr', {}, el('th', {}, 'move'), el('th', {}, 'visits'), el('th', {}, 'value')),
    ...best.map((c) => el('tr', { class: c.move === m.move ? 'chosen' : '' },
      el('td', {}, c.move), el('td', {}, String(c.visits)),
      el('td', {}, c.value === null ? 'not explored' : `${c.certainty === 'proven' ? 'proven ' : ''}${c.value.toFixed(1)}`))),
    m.line && m.line.length ? el('tr', {}, el('td', { colspan: 3, class: 'line' }, `line: ${m.line.join(' ')}`)) : '');
}

function log(text) {
  const list = $('#log');
  list.append(el('li', {}, text));
  list.scrollTop = list.scrollHeight;
}

function startCountdown(ms) {
  stopCountdown();
  game.until = Date.now() + ms;
  const tick = () => {
    const left = Math.max(0, game.until - Date.now());
    const c = document.getElementById('countdown');
    if (c) c.textContent = `${(left / 1000).toFixed(1)} s`;
  };
  game.timer = setInterval(tick, 100);
  tick();
}

function stopCountdown() {
  clearInterval(game.timer);
}

// The person's role whose move the board's clicks choose: the first in role order of those asked.
function humanTurn() {
  const roles = Object.keys(game.pending).map(Number).sort((a, b) => a - b);
  return roles.length ? game.pending[roles[0]] : null;
}

function redrawTurn() {
  const turn = humanTurn();
  const legal = $('#legal');
  $('#undo').hidden = !(turn && turn.can_take_back && game.step > 0);
  if (!turn) {
    legal.replaceChildren();
    if (!$('#turn').textContent.includes(':')) $('#turn').textContent = '';
    return;
  }
  $('#turn').replaceChildren(`Your move, ${game.roles[turn.role]} — `, el('span', { id: 'countdown' }), ' left. Click the board or a move.');
  const moves = game.chosen || turn.moves;
  legal.replaceChildren(...moves.map((m) => el('li', {},
    el('button', { type: 'button', class: 'move', onclick: () => send(turn.role, m.move) }, m.move))));
  $('#countdown').textContent = `${(Math.max(0, game.until - Date.now()) / 1000).toFixed(1)} s`;
}

async function send(role, move) {
  const asked = game.pending[role];
  delete game.pending[role]; // another role a person plays here may still be asked
  game.chosen = null;
  redraw();
  redrawTurn();
  try {
    // The turn's number: a move that arrives after its turn has ended is refused, not played later.
    await api(`/api/matches/${game.id}/move`, { role, move, turn: asked ? asked.turn : undefined });
  } catch (e) {
    notice(e.message);
    // Refused for its turn having ended (409), the move is moot; refused for anything else (a
    // full queue, a lost connection), the turn is still this person's to play.
    if (asked && e.status !== 409 && game.pending[role] === undefined) {
      game.pending[role] = asked;
      redrawTurn();
    }
  }
}

function clickSquare(b, r, c) {
  const turn = humanTurn();
  if (!turn) return;
  const has = (m) => m.squares.some((s) => s[0] === b && s[1] === r && s[2] === c);
  let candidates = (game.chosen || turn.moves).filter(has);
  if (!candidates.length) candidates = turn.moves.filter(has);
  if (candidates.length === 1) { send(turn.role, candidates[0].move); return; }
  game.chosen = candidates.length ? candidates : null;
  redraw();
  redrawTurn();
}

function redraw() {
  const turn = humanTurn();
  const targets = new Set();
  if (turn) for (const m of (game.chosen || turn.moves)) for (const s of m.squares) targets.add(s.join(','));
  $('#board').replaceChildren(drawing(game.drawing, game.text, game.style, targets, clickSquare));
}

// ---- Boards -------------------------------------------------------------------------------------

const PALETTE = ['#c0392b', '#2471a3', '#1e8449', '#b9770e', '#7d3c98', '#117a65', '#5d6d7e'];

function colourOf(value) {
  let h = 0;
  for (const ch of value) h = (h * 31 + ch.codePointAt(0)) >>> 0;
  return PALETTE[h % PALETTE.length];
}

// A state as SVG boards (squares, pieces, the game's own coordinates on the edges) and the other
// facts as a list; a game without a drawing as its text.
function drawing(d, text, style, targets = new Set(), onClick = null) {
  const box = el('div', { class: 'drawing' });
  if (!d) {
    box.append(el('pre', { class: 'state-text' }, text || ''));
    return box;
  }
  const S = 44;
  d.boards.forEach((grid, b) => {
    const labelW = Math.max(...grid.rows.map((r) => r.length), 1) * 9 + 12;
    const top = grid.labels_on_top ? 22 : 4;
    const w = labelW + grid.columns.length * S + 4;
    const h = top + grid.rows.length * S + (grid.labels_on_top ? 4 : 22);
    const root = svg('svg', { width: w, height: h, viewBox: `0 0 ${w} ${h}`, class: 'grid', 'data-board': b });
    if (d.boards.length > 1) box.append(el('div', { class: 'grid-title' }, grid.title));
    grid.columns.forEach((label, c) => {
      const t = svg('text', { x: labelW + c * S + S / 2, y: grid.labels_on_top ? 15 : top + grid.rows.length * S + 16, class: 'axis' });
      t.textContent = label;
      root.append(t);
    });
    grid.rows.forEach((label, r) => {
      const t = svg('text', { x: labelW - 8, y: top + r * S + S / 2 + 5, class: 'axis row-label' });
      t.textContent = label;
      root.append(t);
      grid.columns.forEach((_, c) => {
        const g = svg('g', { class: 'square', 'data-board': b, 'data-row': r, 'data-col': c });
        const target = targets.has(`${b},${r},${c}`);
        const rect = svg('rect', { x: labelW + c * S, y: top + r * S, width: S, height: S, class: `cell ${(r + c) % 2 ? 'dark' : 'light'}${target ? ' target' : ''}` });
        g.append(rect);
        const value = grid.cells[r][c];
        if (value !== null) {
          const piece = style[value];
          const t = svg('text', { x: labelW + c * S + S / 2, y: top + r * S + S / 2 + 8, class: 'piece', fill: (piece && piece.colour) || colourOf(value) });
          t.textContent = piece ? piece.symbol : value.length > 4 ? value.slice(0, 4) : value;
          t.setAttribute('data-value', value);
          g.append(t);
        }
        if (target && onClick) {
          g.classList.add('target');
          g.addEventListener('click', () => onClick(b, r, c));
        }
        root.append(g);
      });
    });
    box.append(root);
  });
  if (d.facts.length) box.append(el('ul', { class: 'facts' }, ...d.facts.map((f) => el('li', {}, f))));
  return box;
}

// ---- Matches ------------------------------------------------------------------------------------

async function listMatches() {
  const { matches } = await api('/api/matches');
  $('#match-list tbody').replaceChildren(...matches.reverse().map((m) => el('tr', {},
    el('td', {}, el('a', { href: `#match/${m.id}` }, `#${m.id}`)),
    el('td', {}, m.game),
    el('td', {}, m.roles.map((r, i) => `${r}=${m.seats[i]}`).join(', ')),
    el('td', {}, m.done ? 'over' : 'playing'))));
}

// ---- Replay -------------------------------------------------------------------------------------

const replay = { frames: null, step: 0, style: {} };

async function openReplay(arg) {
  await loadGames();
  const select = $('#replay-game');
  select.replaceChildren(el('option', { value: '' }, 'as the record says'), ...games.map((g) => el('option', { value: g.name }, g.name)));
  $('#replay-view').hidden = true;
  if (arg.startsWith('match/')) {
    const id = arg.slice('match/'.length);
    const status = await api(`/api/matches/${id}`);
    const response = await fetch(`/api/matches/${id}/record`);
    const record = await response.text();
    if (!response.ok) throw new Error(JSON.parse(record).error || record);
    // Rules typed into the page are the server's to give back (the editor may hold others by now);
    // a match of the library's game has none there (404).
    let typed = null;
    try {
      typed = await api(`/api/matches/${id}/rules`);
    } catch (e) {
      if (e.status !== 404) throw e;
    }
    await showReplay(typed ? { record, ...typed } : { record, game: status.game });
  }
}

async function openRecordFile() {
  const file = $('#record-file').files[0];
  if (!file) { notice('Choose a match record (a .json file) first.'); return; }
  const record = await file.text();
  const request = { record };
  if ($('#replay-game').value) request.game = $('#replay-game').value;
  try {
    await showReplay(request);
  } catch (e) {
    notice(e.message);
  }
}

async function showReplay(request) {
  const frames = await api('/api/replay', request);
  replay.frames = frames;
  replay.style = await styleOf(frames.game);
  $('#slider').max = frames.steps.length - 1;
  $('#replay-view').hidden = false;
  $('#replay-result').textContent = frames.completed
    ? `Goals: ${frames.roles.map((r, i) => `${r} ${frames.goals[i]}`).join(', ')}`
    : 'The match did not finish.';
  stepTo(0);
}

function stepTo(step) {
  if (!replay.frames) return;
  const last = replay.frames.steps.length - 1;
  replay.step = Math.max(0, Math.min(last, step));
  const frame = replay.frames.steps[replay.step];
  $('#slider').value = replay.step;
  $('#replay-step').textContent = `step ${replay.step} of ${last}`;
  $('#replay-board').replaceChildren(drawing(frame.drawing, frame.text, replay.style));
  $('#replay-moves').textContent = frame.moves
    ? `Played: ${frame.moves.map((m, i) => `${replay.frames.roles[i]} ${m}${substituted(frame.errors && frame.errors[i])}`).join(', ')}`
    : 'The initial state.';
}

// What a record says of a move the referee played in a player's place (ggp-base's codes).
function substituted(code) {
  if (!code) return '';
  if (code === 'TO') return ' (substituted: no move within the play clock)';
  if (code === 'CE') return ' (substituted: the player could not be reached)';
  if (code.startsWith('IL')) return ` (substituted for the illegal ${code.slice(2).trim() || 'move'})`;
  return ` (substituted: ${code})`;
}

// ---- Tournament ---------------------------------------------------------------------------------

// The form, and below it the tournament the address names (`#tournament/ID`), followed until it ends.
async function openTournament(arg) {
  // Taken over before the first await: a page that moves on meanwhile stops this view, not the next.
  const view = { left: false };
  leaveView = () => { view.left = true; };
  await loadGames();
  if (view.left) return;
  const select = $('#t-game');
  if (!select.options.length) select.replaceChildren(...games.map((g) => el('option', { value: g.name }, g.name)));
  $('#t-csv').hidden = true;
  $('#t-stop').hidden = true;
  $('#t-progress').textContent = '';
  $('#t-table tbody').replaceChildren();
  $('#t-others').hidden = true;
  if (arg) await followTournament(Number(arg), view);
  else await listTournaments(view);
}

// The tournaments the server remembers, running ones first: one whose address was lost is found here.
async function listTournaments(view) {
  let tournaments;
  try {
    ({ tournaments } = await api('/api/tournaments'));
  } catch (e) {
    if (!view.left) notice(`The tournaments: ${e.message}`);
    return;
  }
  if (view.left) return;
  tournaments.sort((a, b) => (a.done - b.done) || (b.id - a.id));
  $('#t-list tbody').replaceChildren(...tournaments.map((t) => el('tr', {},
    el('td', {}, el('a', { href: `#tournament/${t.id}` }, `#${t.id}`)),
    el('td', {}, t.game),
    el('td', {}, t.players.join(', ')),
    el('td', {}, `${t.played} of ${t.total}`),
    el('td', {}, t.done ? 'done' : t.stopping ? 'stopping' : 'playing'))));
  $('#t-others').hidden = !tournaments.length;
}

async function startTournament(event) {
  event.preventDefault();
  const request = {
    game: $('#t-game').value,
    players: $('#t-players').value.split(',').map((p) => p.trim()).filter(Boolean),
    games: Number($('#t-games').value),
    playclock: Number($('#t-playclock').value),
  };
  // One tournament per click: the button waits for the server's answer.
  $('#t-start').disabled = true;
  try {
    const t = await api('/api/tournaments', request);
    // The address names it: the view follows it, and comes back to it after a visit elsewhere.
    location.hash = `#tournament/${t.id}`;
  } catch (e) {
    notice(e.message);
  } finally {
    $('#t-start').disabled = false;
  }
}

async function followTournament(id, view) {
  $('#t-stop').onclick = () => api(`/api/tournaments/${id}/stop`, {}).catch((e) => notice(e.message));
  let t;
  let failures = 0;
  while (!view.left) {
    try {
      t = await api(`/api/tournaments/${id}`);
      if (failures && !view.left) notice('');
      failures = 0;
    } catch (e) {
      if (view.left) return;
      // A tournament the server does not know is gone for good; anything else (a lost connection,
      // a busy server) may pass, so the page asks again, less often the longer it lasts.
      if (e.status === 404) {
        notice(`Tournament #${id}: ${e.message}`);
        $('#t-stop').hidden = true;
        return;
      }
      failures += 1;
      notice(`Tournament #${id}: ${e.message}; asking again…`);
      await new Promise((r) => setTimeout(r, Math.min(500 * 2 ** failures, 10000)));
      continue;
    }
    if (view.left) return; // the page moved on while the answer was on its way
    const state = t.done ? (t.error ? '' : ', done') : t.stopping ? ', stopping after the games in play…' : '…';
    $('#t-progress').textContent = `#${id}: ${t.played} of ${t.total} games played${state}${t.error ? ` (${t.error})` : ''}`;
    $('#t-stop').hidden = t.done || t.stopping;
    $('#t-table tbody').replaceChildren(...t.table.map((s) => el('tr', {},
      el('td', {}, s.name), el('td', {}, String(s.games)), el('td', {}, String(s.wins)),
      el('td', {}, String(s.draws)), el('td', {}, String(s.losses)),
      // An entrant yet to play has no score: a dash, not a certain loss of 0–0%.
      el('td', {}, s.games ? `${(100 * s.score).toFixed(0)}%` : '–'),
      el('td', {}, s.games ? `${(100 * s.low).toFixed(0)}–${(100 * s.high).toFixed(0)}%` : '–'))));
    if (t.done) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  if (view.left) return;
  $('#t-csv').href = `/api/tournaments/${id}/csv`;
  $('#t-csv').hidden = false;
}

// ---- Wiring -------------------------------------------------------------------------------------

$('#rules').addEventListener('input', scheduleCheck);
$('#rules').addEventListener('scroll', () => { $('#gutter').scrollTop = $('#rules').scrollTop; });
$('#syntax').addEventListener('change', () => { syncConvertLabel(); check(); });
$('#fmt').addEventListener('click', () => reformat('/api/fmt'));
$('#convert').addEventListener('click', () => reformat('/api/convert', { to: $('#syntax').value === 'kif' ? 'gdl' : 'kif' }));
$('#play-edited').addEventListener('click', () => { location.hash = '#play'; });
$('#setup-form').addEventListener('submit', startMatch);
$('#undo').addEventListener('click', () => {
  const turn = humanTurn();
  // With the turn's number: a take-back that arrives after its turn has ended is refused.
  if (turn) api(`/api/matches/${game.id}/move`, { role: turn.role, undo: true, turn: turn.turn }).catch((e) => notice(e.message));
});
$('#stop').addEventListener('click', () => api(`/api/matches/${game.id}/stop`, {}).catch((e) => notice(e.message)));
$('#replay-open').addEventListener('click', openRecordFile);
$('#slider').addEventListener('input', () => stepTo(Number($('#slider').value)));
$('#prev').addEventListener('click', () => stepTo(replay.step - 1));
$('#next').addEventListener('click', () => stepTo(replay.step + 1));
document.addEventListener('keydown', (e) => {
  // A focused field (the slider too) handles its own keys.
  if ($('#replay').hidden || ['TEXTAREA', 'INPUT', 'SELECT'].includes(e.target.tagName)) return;
  if (e.key === 'ArrowLeft') { stepTo(replay.step - 1); e.preventDefault(); }
  if (e.key === 'ArrowRight') { stepTo(replay.step + 1); e.preventDefault(); }
});
$('#t-form').addEventListener('submit', startTournament);
window.addEventListener('hashchange', route);
route();
