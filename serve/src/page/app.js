'use strict';
// The agent-host web page. No framework and no build step: the server compiles these files
// into the binary. Everything shown that came from the server (model text, tool output,
// plugin text) goes in as text nodes, never as HTML, so none of it can run.

const TOKEN_KEY = 'agent-host.token';
const OPEN_KEY = 'agent-host.session';

// Each answer a person may give: what the API takes, the button, and the answer as the
// `approval_answered` event names it (so a card says the same, answered here or replayed).
const ANSWERS = [
  ['once', 'Allow once', 'allow_once'],
  ['always_tool', 'Always allow this tool', 'allow_tool_always'],
  ['always_arguments', 'Always allow these arguments', 'allow_exact_always'],
  ['deny', 'Deny', 'deny'],
];
const ANSWERED = {
  allow_once: 'Allowed once',
  allow_tool_always: 'Always allowed for this tool',
  allow_exact_always: 'Always allowed for these arguments',
  deny: 'Denied',
  unanswerable: 'Nobody could answer; agent.on_ask decided',
};

const $ = (id) => document.getElementById(id);
const enc = encodeURIComponent;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let token = sessionStorage.getItem(TOKEN_KEY) || '';
let view = null; // the open session

// --- DOM helpers -------------------------------------------------------------------------

// Strings among `children` become text nodes (Element.append), so data is never parsed.
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  node.append(...children.filter((child) => child !== null && child !== undefined));
  return node;
}

// Characters that change how text reads without being seen: controls, and every Unicode
// format character (bidi embeddings, overrides, isolates and marks, zero-width ones, tags).
// In an approval they could make a call read as another, so each is shown as what it is
// (`\u{202e}`, marked), the way the console shows them; line breaks and tabs stay when
// `keepLines`.
const INVISIBLE = /[\p{Cc}\p{Cf}\u2028\u2029]/u;

function escaped(c) {
  if (c === '\n') return '\\n';
  if (c === '\t') return '\\t';
  if (c === '\r') return '\\r';
  const code = c.codePointAt(0);
  return code < 0x80 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
}

// `text` as nodes for el(): plain runs as text, each invisible character as a marked escape.
function shown(text, keepLines = false) {
  const nodes = [];
  let plain = '';
  for (const c of String(text)) {
    if (!INVISIBLE.test(c) || (keepLines && (c === '\n' || c === '\t'))) {
      plain += c;
      continue;
    }
    if (plain) nodes.push(plain);
    plain = '';
    nodes.push(el('span', { class: 'escaped', title: `U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}` }, escaped(c)));
  }
  if (plain) nodes.push(plain);
  return nodes;
}

function notice(text, bad = false) {
  const node = $('notice');
  node.textContent = text;
  node.classList.toggle('bad', bad);
}

function pretty(value) {
  if (typeof value === 'string') {
    try {
      return JSON.stringify(JSON.parse(value), null, 2);
    } catch {
      return value;
    }
  }
  return JSON.stringify(value, null, 2);
}

// --- the API -----------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function api(method, path, body) {
  const headers = { Authorization: `Bearer ${token}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (error) {
    throw new ApiError(0, `the server cannot be reached (${error.message})`);
  }
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (response.status === 401) {
    signOut('The server refused the token.');
  }
  if (!response.ok) {
    throw new ApiError(response.status, (data && data.error) || `${response.status} ${response.statusText}`);
  }
  return data;
}

// Runs a slash command; `{ ok, text }` whatever the outcome, so callers choose what to show.
async function command(v, line) {
  try {
    const data = await api('POST', `/v1/sessions/${enc(v.id)}/commands`, { line });
    return { ok: true, text: (data && data.output) || '' };
  } catch (error) {
    return { ok: false, text: error.message };
  }
}

// --- signing in and out --------------------------------------------------------------------

async function signIn(candidate) {
  token = candidate;
  $('signin-error').textContent = '';
  try {
    await api('GET', '/v1/sessions');
  } catch (error) {
    if (error.status !== 401) $('signin-error').textContent = error.message;
    token = '';
    return;
  }
  sessionStorage.setItem(TOKEN_KEY, token);
  $('token').value = '';
  await showApp();
}

function signOut(message = '') {
  token = '';
  sessionStorage.removeItem(TOKEN_KEY);
  sessionStorage.removeItem(OPEN_KEY);
  closeSession();
  $('app').hidden = true;
  $('signout').hidden = true;
  $('signin').hidden = false;
  $('signin-error').textContent = message;
  notice('');
  $('token').focus();
}

async function showApp() {
  $('signin').hidden = true;
  $('app').hidden = false;
  $('signout').hidden = false;
  const sessions = await loadSessions();
  if (!token) return; // refused while listing
  loadPlugins();
  const wanted = sessionStorage.getItem(OPEN_KEY);
  if (wanted && sessions.some((s) => s.id === wanted)) {
    openSession(wanted);
  } else {
    $('new-session').focus();
  }
}

// --- sessions ------------------------------------------------------------------------------

async function loadSessions() {
  try {
    const { sessions: all } = await api('GET', '/v1/sessions');
    // A child agent's session (an admin's list has them) is shown in its parent's call.
    const sessions = all.filter((session) => !session.parent);
    renderSessions(sessions);
    return sessions;
  } catch (error) {
    if (error.status !== 401) notice(`Cannot list sessions: ${error.message}`, true);
    return [];
  }
}

// How long ago `seconds` (unix) was, as the console says it: "5 s ago", "3 min ago".
function ago(seconds) {
  const elapsed = Math.max(0, Math.floor(Date.now() / 1000) - seconds);
  if (elapsed < 60) return `${elapsed} s ago`;
  if (elapsed < 3600) return `${Math.floor(elapsed / 60)} min ago`;
  if (elapsed < 86400) return `${Math.floor(elapsed / 3600)} h ago`;
  return `${Math.floor(elapsed / 86400)} d ago`;
}

function renderSessions(sessions) {
  const list = $('sessions');
  list.replaceChildren();
  if (sessions.length === 0) list.append(el('li', { class: 'note' }, 'No sessions yet.'));
  for (const session of sessions) {
    const open = el(
      'button',
      {
        type: 'button',
        class: `open${session.busy ? ' busy' : ''}`,
        title: session.id,
        'data-session': session.id,
        'aria-current': view && view.id === session.id ? 'true' : null,
        onclick: () => openSession(session.id),
      },
      // Its first prompt tells it apart (the id when it has none yet), then when it was used.
      el('span', { class: `title${session.title ? '' : ' mono'}` }, ...shown(session.title || session.id)),
      el('span', { class: 'when' }, ago(session.updated_at)),
      session.busy ? el('span', { class: 'visually-hidden' }, ' (a turn is running)') : null,
    );
    const remove = el(
      'button',
      { type: 'button', class: 'danger', title: 'Delete', 'aria-label': `Delete session ${session.id}`, onclick: () => deleteSession(session.id) },
      '✕',
    );
    list.append(el('li', {}, open, remove));
  }
}

async function createSession() {
  try {
    const { id } = await api('POST', '/v1/sessions');
    await loadSessions();
    await openSession(id);
  } catch (error) {
    notice(`Cannot create a session: ${error.message}`, true);
  }
}

async function deleteSession(id) {
  if (!confirm(`Delete session ${id} and everything kept of it?`)) return;
  try {
    await api('DELETE', `/v1/sessions/${enc(id)}`);
    if (view && view.id === id) closeSession();
    notice(`Deleted session ${id}.`);
  } catch (error) {
    notice(`Cannot delete: ${error.message}`, true);
  }
  loadSessions();
}

function markOpen() {
  for (const button of $('sessions').querySelectorAll('button.open')) {
    if (view && button.dataset.session === view.id) button.setAttribute('aria-current', 'true');
    else button.removeAttribute('aria-current');
  }
}

// --- one open session ----------------------------------------------------------------------

class View {
  constructor(id) {
    this.id = id;
    this.abort = new AbortController();
    this.closed = false;
    this.lastEventId = null;
    // While a turn runs when the session opens, the stream is followed from its start and
    // what it replays up to the id `GET` gave (`replayUntil`) is held in `buffer`: of it,
    // only the running turn is shown, in place of its part already stored.
    this.replayUntil = null;
    this.buffer = [];
    this.busy = false;
    this.turnsEnded = 0;
    this.status = [];
    this.views = new Map(); // plugin → its view, as GET and view_changed give it
    this.tools = new Map();
    this.approvals = new Map(); // by approvalKey: a child agent's call's id may be another's
    this.children = new Map(); // child agent's session id → its card (children.js)
    this.reply = null; // the assistant reply streaming in
  }

  close() {
    this.closed = true;
    this.abort.abort();
  }
}

function closeSession() {
  if (view) view.close();
  view = null;
  $('session').hidden = true;
  $('empty').hidden = false;
  sessionStorage.removeItem(OPEN_KEY);
  markOpen();
}

// The session as stored (history, status, views) and the id of the last event those
// include; then its stream from that id, so nothing is shown twice or missed.
async function openSession(id) {
  if (view) view.close();
  const v = (view = new View(id));
  sessionStorage.setItem(OPEN_KEY, id);
  $('empty').hidden = true;
  $('session').hidden = false;
  $('session').dataset.ready = 'false';
  $('session-title').textContent = id;
  $('log').replaceChildren();
  $('log').dataset.turnsEnded = '0';
  renderStatus(v);
  renderViews(v);
  setBusy(v, false);
  setActivity('Loading…');
  markOpen();
  let detail;
  try {
    detail = await api('GET', `/v1/sessions/${enc(id)}`);
  } catch (error) {
    if (error.status === 404) return sessionGone(v);
    if (error.status !== 401) notice(`Cannot load the session: ${error.message}`, true);
    return;
  }
  if (v.closed) return;
  renderHistory(v, detail.messages || []);
  setStatus(v, detail.status || []);
  for (const pv of detail.views || []) v.views.set(pv.plugin, pv);
  renderViews(v);
  setBusy(v, Boolean(detail.busy));
  // The stream is followed from its start, what it replays up to the id GET gave held back:
  // the events of the turns that ended rebuild their tool cards as they were drawn (the
  // history has no outcome, refusal, plugin or diff), and a running turn is shown from its own.
  if (detail.last_event_id) v.replayUntil = detail.last_event_id;
  $('session').dataset.ready = 'true';
  scrollToEnd(true);
  if (document.activeElement === document.body || $('sessions').contains(document.activeElement) || document.activeElement === $('new-session')) {
    $('prompt').focus();
  }
  follow(v);
}

function sessionGone(v) {
  if (v !== view) return;
  notice('That session no longer exists.', true);
  closeSession();
  loadSessions();
}

// The stream, read with fetch because EventSource cannot send the Authorization header;
// after a drop it reconnects with Last-Event-ID and is sent what it missed.
async function follow(v) {
  let delay = 500;
  while (!v.closed) {
    try {
      const headers = { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' };
      if (v.lastEventId !== null) headers['Last-Event-ID'] = v.lastEventId;
      const response = await fetch(`/v1/sessions/${enc(v.id)}/events`, { headers, signal: v.abort.signal, cache: 'no-store' });
      if (response.status === 401) return signOut('The server refused the token.');
      if (response.status === 404) return sessionGone(v);
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      delay = 500;
      setActivity(v.busy ? 'Working…' : '');
      await readEvents(response.body, (raw) => receive(v, raw));
    } catch {
      // A dropped or refused stream is retried below; a closed view stops.
    }
    if (v.closed) return;
    setActivity('Reconnecting…');
    await sleep(delay);
    delay = Math.min(delay * 2, 8000);
  }
}

async function readEvents(body, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let data = [];
  let type = '';
  let id = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    // A chunk ending in \r may be half of a \r\n: keep it for the next one.
    const cut = buffer.endsWith('\r') ? buffer.length - 1 : buffer.length;
    const lines = buffer.slice(0, cut).split(/\r\n|\r|\n/);
    buffer = lines.pop() + buffer.slice(cut);
    for (const line of lines) {
      if (line === '') {
        if (data.length) onEvent({ id, type, data: data.join('\n') });
        data = [];
        type = '';
        id = null;
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let text = colon < 0 ? '' : line.slice(colon + 1);
      if (text.startsWith(' ')) text = text.slice(1);
      if (field === 'data') data.push(text);
      else if (field === 'event') type = text;
      else if (field === 'id') id = text;
    }
  }
}

function receive(v, raw) {
  if (v.closed) return;
  let event;
  try {
    event = JSON.parse(raw.data);
  } catch {
    return;
  }
  if (raw.id) v.lastEventId = raw.id;
  const type = (event && event.type) || raw.type;
  if (v.replayUntil === null) return handle(v, type, event);
  v.buffer.push([type, event]);
  if (raw.id === v.replayUntil) replayed(v);
}

// Everything up to the id GET gave has been replayed: the turns that ended are in the
// stored history, whose cards their events complete, and the views GET gave already hold
// every change; a running turn is shown from its events, in place of its part already stored.
function replayed(v) {
  const events = v.buffer;
  v.buffer = [];
  v.replayUntil = null;
  let lastEnd = -1;
  events.forEach(([type], index) => {
    if (type === 'turn_ended') lastEnd = index;
  });
  const running = v.busy ? events.slice(lastEnd + 1).filter(([type]) => type !== 'view_changed') : [];
  const started = running.find(([type]) => type === 'user_message');
  if (started) cutHistoryAt(v, started[1].text);
  restoreCards(v, v.busy ? events.slice(0, lastEnd + 1) : events);
  for (const [type, event] of running) handle(v, type, event);
  scrollToEnd(true);
}

// The events of calls the history shows, applied to their cards (found by the call's id,
// unique in a session) as they were when they happened: the plugin, the outcome, a refusal,
// the diffs, the approvals asked and how they were answered. A call the history no longer
// shows is passed over.
function restoreCards(v, events) {
  const asked = new Set(v.approvals.keys());
  for (const [type, e] of events) {
    // A child agent's card, nested in the card of the call that started it.
    if (type.startsWith('subagent')) {
      childEvent(v, type, e, true);
      continue;
    }
    const card = e && typeof e.id === 'string' ? v.tools.get(e.id) : undefined;
    if (!card) continue;
    switch (type) {
      case 'tool_call':
        toolCard(v, e.id, e.name, e.plugin);
        setArguments(card, e.arguments);
        break;
      case 'tool_decision':
        if (e.decision === 'deny') setDenied(card, e);
        break;
      case 'tool_result':
        setOutput(card, e.ok, e.output);
        break;
      case 'file_edited':
        addEdit(card, e);
        break;
      case 'approval_requested':
        addApproval(v, e, { place: (node) => lastApprovalAfter(card).after(node), restored: true });
        break;
      case 'approval_answered':
        approvalAnswered(v, e);
        break;
      default:
        break;
    }
  }
  // An ask the turn ended without an answer to (cancelled, say) is over too.
  for (const [key, approval] of v.approvals) {
    if (!asked.has(key) && !approval.card.dataset.answered) closeApproval(v, key, 'Not answered: the turn ended first');
  }
}

// Where the next approval of `card`'s call goes: after the ones already drawn under it.
function lastApprovalAfter(card) {
  let last = card.node;
  while (last.nextElementSibling && last.nextElementSibling.matches('.approval')) last = last.nextElementSibling;
  return last;
}

function setBusy(v, busy) {
  if (v !== view) return;
  v.busy = busy;
  $('chat').setAttribute('aria-busy', String(busy));
  $('cancel').disabled = !busy;
  setActivity(busy ? 'Working…' : '');
}

function setActivity(text) {
  $('activity').textContent = text;
}

async function refresh(v) {
  // The server answers `busy` until the turn's task has finished, a moment after turn_ended.
  for (let attempt = 0; attempt < 10 && !v.closed; attempt += 1) {
    let detail;
    try {
      detail = await api('GET', `/v1/sessions/${enc(v.id)}`);
    } catch (error) {
      if (error.status === 404) sessionGone(v);
      return;
    }
    if (v.closed || v.busy) return;
    if (!detail.busy) {
      setStatus(v, detail.status || []);
      loadSessions(); // its busy marks
      return;
    }
    await sleep(150 * (attempt + 1));
  }
}

// --- rendering the conversation ------------------------------------------------------------

function nearEnd() {
  const log = $('log');
  return log.scrollHeight - log.scrollTop - log.clientHeight < 80;
}

function scrollToEnd(force = false) {
  const log = $('log');
  if (force || nearEnd()) log.scrollTop = log.scrollHeight;
}

function add(node) {
  const stick = nearEnd();
  $('log').append(node);
  if (stick) scrollToEnd(true);
  return node;
}

function message(role, who, text) {
  const body = el('div', { class: 'body' }, text);
  const node = el('div', { class: `msg ${role}`, 'data-role': role }, el('span', { class: 'who' }, who), body);
  node.body = body;
  return node;
}

// A command and what it answered: the answer preformatted, as a console prints it, so the
// columns of a listing (`/help`, `/plugins`) stay columns.
function commandEntry(ok, line, text) {
  const entry = message(ok ? 'command' : 'error', line, '');
  entry.body.replaceChildren(el('pre', { class: 'output' }, ...shown(text, true)));
  return entry;
}

// A whole reply, as markdown (streamed text stays plain until the reply is whole).
function showReply(bubble, text) {
  bubble.body.replaceChildren(...renderMarkdown(text, shown));
  bubble.body.classList.add('markdown');
}

function note(text, kind = 'event') {
  return add(el('div', { class: `msg ${kind}` }, text));
}

function renderHistory(v, messages) {
  for (const m of messages) {
    if (m.role === 'user') add(message('user', 'you', m.content));
    else if (m.role === 'assistant') {
      if (m.content) showReply(add(message('assistant', 'assistant', '')), m.content);
      for (const call of m.tool_calls || []) setArguments(toolCard(v, call.id, call.name), call.arguments);
    } else if (m.role === 'tool') {
      const card = toolCard(v, m.tool_call_id || '', 'tool');
      setOutput(card, null, m.content);
    } else {
      add(el('details', { class: 'tool' }, el('summary', {}, `${m.role} message`), el('pre', {}, m.content)));
    }
  }
}

// Drops the stored part of the running turn, which its replayed events show again.
function cutHistoryAt(v, text) {
  const users = [...$('log').querySelectorAll('.msg[data-role="user"]')];
  const start = users.reverse().find((node) => node.body.textContent === text);
  if (!start) return;
  let node = start;
  while (node) {
    const next = node.nextSibling;
    if (node.dataset && node.dataset.tool) v.tools.delete(node.dataset.tool);
    node.remove();
    node = next;
  }
  // The children drawn in what went: their events come again with the turn's.
  for (const [id, child] of v.children) {
    if (!child.node.isConnected) v.children.delete(id);
  }
}

function handle(v, type, e) {
  switch (type) {
    case 'user_message':
      v.reply = null;
      add(message('user', 'you', e.text));
      setBusy(v, true);
      break;
    case 'assistant_delta':
      if (!v.reply) v.reply = add(message('assistant', 'assistant', ''));
      v.reply.body.append(e.text);
      scrollToEnd();
      break;
    case 'assistant_message':
      finishReply(v, e);
      break;
    case 'tool_call': {
      const card = toolCard(v, e.id, e.name, e.plugin);
      setArguments(card, e.arguments);
      setState(card, 'running…');
      break;
    }
    case 'file_edited':
      addEdit(toolCard(v, e.id, 'tool'), e);
      break;
    case 'tool_result':
      setOutput(toolCard(v, e.id, e.name), e.ok, e.output);
      break;
    case 'tool_decision':
      if (e.decision === 'deny') setDenied(toolCard(v, e.id, e.name), e);
      break;
    case 'approval_requested':
      addApproval(v, e);
      break;
    case 'approval_answered':
      approvalAnswered(v, e);
      break;
    case 'subagent_started':
    case 'subagent':
    case 'subagent_ended':
      childEvent(v, type, e);
      break;
    case 'plugin':
      if (e.display) add(el('pre', { class: 'msg event' }, `${e.plugin}: ${e.display}`));
      break;
    case 'view_changed':
      applyView(v, e);
      break;
    case 'turn_ended':
      v.reply = null;
      v.turnsEnded += 1;
      $('log').dataset.turnsEnded = String(v.turnsEnded);
      $('log').dataset.lastTurn = e.reason;
      if (e.reason !== 'done') note(`The turn ended: ${e.reason}.`, e.reason === 'error' ? 'error' : 'event');
      setBusy(v, false);
      refresh(v);
      break;
    case 'error':
      note(e.plugin ? `${e.plugin}: ${e.message}` : e.message, 'error');
      break;
    case 'prompt_blocked':
      note(`${e.plugin} blocked the prompt: ${e.reason}`, 'error');
      break;
    case 'continued':
      add(message('user', `${e.plugin} kept the turn going`, e.message));
      break;
    case 'compacted':
      note(`History compacted by ${e.strategy} (${e.reason}): ${e.note}`);
      break;
    case 'compaction_vetoed':
      note(`${e.plugin} put off compaction: ${e.reason}`);
      break;
    case 'mcp_server_started':
      note(`MCP server ${e.server} started with ${e.tools.length} tools.`);
      break;
    case 'mcp_server_failed':
      note(`MCP server ${e.server} failed: ${e.error}`, 'error');
      break;
    case 'plugin_rejected':
      note(`Plugin rejected (${e.path}): ${e.error}`, 'error');
      break;
    case 'gap':
      v.replayUntil = null;
      note('Some earlier events are no longer kept by the server; what is shown may miss them.');
      break;
    default:
      break; // model_request, plugin_loaded and the like are for machines
  }
}

function finishReply(v, e) {
  let bubble = v.reply;
  v.reply = null;
  if (e.reasoning) {
    const reasoning = el('details', { class: 'tool' }, el('summary', {}, 'reasoning'), el('pre', {}, e.reasoning));
    if (bubble) bubble.before(reasoning);
    else add(reasoning);
  }
  if (e.text) {
    if (!bubble) bubble = add(message('assistant', 'assistant', ''));
    showReply(bubble, e.text); // the whole reply, whatever of it streamed
  } else if (bubble && !bubble.body.textContent) {
    bubble.remove();
  }
  for (const call of e.tool_calls || []) setArguments(toolCard(v, call.id, call.name), call.arguments);
  if (['length', 'filtered', 'broken_off'].includes(e.stop)) note(`The reply stopped early: ${e.stop}.`);
}

function toolCard(v, id, name, plugin) {
  let card = v.tools.get(id);
  if (!card) {
    const state = el('span', { class: 'state' }, 'requested');
    const who = el('span', { class: 'note' });
    const args = el('pre', { 'data-label': 'arguments', hidden: true });
    const output = el('pre', { 'data-label': 'output', hidden: true });
    const node = el('details', { class: 'tool', 'data-tool': id }, el('summary', {}, 'tool ', el('code', {}, ...shown(name)), ' ', who, ' — ', state), args, output);
    card = { node, state, who, args, output };
    v.tools.set(id, card);
    add(node);
  }
  if (plugin) card.who.replaceChildren('(', ...shown(plugin), ')');
  return card;
}

function setArguments(card, value) {
  card.args.hidden = false;
  card.args.replaceChildren(...shown(pretty(value), true));
}

// A file the call changed, as a diff before its output; the card opens to show it.
function addEdit(card, edit) {
  card.node.insertBefore(renderDiff(edit, (run) => shown(run)), card.output);
  card.node.open = true;
}

function setState(card, text, tone = '') {
  card.state.textContent = text;
  card.state.className = `state${tone ? ` state-${tone}` : ''}`;
}

// A call a policy refused: said on its card, and kept there when its (failed) result follows.
function setDenied(card, e) {
  card.denied = true;
  setState(card, `denied by ${e.decided_by}: ${e.reason}`, 'bad');
}

function setOutput(card, ok, output) {
  card.output.hidden = false;
  card.output.textContent = output;
  card.node.dataset.ok = ok === null ? 'unknown' : String(ok);
  if (card.denied) return;
  if (ok === null) setState(card, 'done');
  else setState(card, ok ? 'ok' : 'failed', ok ? 'ok' : 'bad');
}

// --- approvals -----------------------------------------------------------------------------

// What an approval is kept under: the call's id, or for a child agent's call (`agent`, its
// session) both, since children running at once may each make a call of the same id.
function approvalKey(id, agent = null) {
  return agent ? `${agent}/${id}` : id;
}

// The approval asked about call `e.id` (of the child agent whose session is `agent`, if one's,
// named `agentName`), as a card with its answers; `place` puts it in the conversation (by
// default at the end, where a person's eyes are). The focus goes to it unless `restored`.
function addApproval(v, e, { place = null, agent = null, agentName = '', restored = false } = {}) {
  const key = approvalKey(e.id, agent);
  if (v.approvals.has(key)) return;
  if (!place) setState(toolCard(v, e.id, e.name, e.plugin), 'waiting for your answer');
  const reason = el('input', { type: 'text', placeholder: 'Reason, for Deny (optional)', 'aria-label': 'Reason for denying (optional)' });
  const status = el('p', { class: 'note', role: 'status' });
  const buttons = ANSWERS.map(([answer, label]) =>
    el('button', { type: 'button', class: answer === 'deny' ? 'danger' : null, 'data-answer': answer, onclick: () => answerApproval(v, key, answer) }, label),
  );
  reason.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') {
      event.preventDefault();
      answerApproval(v, key, 'deny');
    }
  });
  const card = el(
    'section',
    { class: 'approval', 'data-approval': e.id, 'data-agent': agent, 'aria-label': `Approval asked for ${e.name}` },
    el('strong', {}, 'Allow ', el('code', {}, ...shown(e.name)), ' (', ...shown(e.plugin), ')', ...(agent ? [' for child agent ', ...shown(agentName)] : []), '?'),
    // A policy's reason may name a tool or a command as `code`: drawn as it is in a reply.
    el('div', { class: 'reason' }, ...markdownInline(String(e.reason), (run) => shown(run))),
    el('div', { class: 'note' }, 'asked by ', ...shown(e.asked_by)),
    el('pre', { 'data-label': 'arguments' }, ...shown(pretty(e.arguments), true)),
    el('div', { class: 'answers' }, ...buttons, reason),
    status,
  );
  v.approvals.set(key, { card, buttons, reason, status, id: e.id, agent });
  if (place) place(card);
  else add(card);
  if (restored) return;
  scrollToEnd(true);
  const focus = document.activeElement;
  if (focus === document.body || (focus === $('prompt') && !$('prompt').value)) buttons[0].focus();
}

async function answerApproval(v, key, answer) {
  const approval = v.approvals.get(key);
  if (!approval) return;
  const body = { answer };
  const reason = approval.reason.value.trim();
  if (answer === 'deny' && reason) body.reason = reason;
  if (approval.agent) body.agent = approval.agent;
  for (const button of approval.buttons) button.disabled = true;
  approval.status.textContent = 'Sending…';
  try {
    await api('POST', `/v1/sessions/${enc(v.id)}/approvals/${enc(approval.id)}`, body);
    const said = ANSWERED[ANSWERS.find(([a]) => a === answer)[2]];
    closeApproval(v, key, body.reason ? `${said}: ${body.reason}` : said);
  } catch (error) {
    if (error.status === 404) return closeApproval(v, key, `No longer waiting: ${error.message}`);
    approval.status.textContent = `Not sent: ${error.message}`;
    for (const button of approval.buttons) button.disabled = false;
  }
}

// `agent`: the child agent's session, for an answer to one of its calls.
function approvalAnswered(v, e, agent = null) {
  const answer = ANSWERED[e.answer] || e.answer;
  closeApproval(v, approvalKey(e.id, agent), e.reason ? `${answer}: ${e.reason}` : answer);
}

function closeApproval(v, key, text) {
  const approval = v.approvals.get(key);
  if (!approval) return;
  const hadFocus = approval.card.contains(document.activeElement);
  approval.card.classList.add('answered');
  approval.card.dataset.answered = 'true';
  approval.card.querySelector('.answers').hidden = true;
  approval.status.textContent = text;
  if (hadFocus) $('prompt').focus();
}

// --- what plugins show: views ----------------------------------------------------------------
// Each plugin's view is a list of widgets the page draws by their kind alone: a checklist, a
// choice (a switcher when the plugin gave a command for it, else what it is now and what it
// may be), a text. No plugin is known here; every word shown comes from the view, as text.

function setStatus(v, status) {
  v.status = status;
  renderStatus(v);
}

function renderStatus(v) {
  $('status').replaceChildren(...v.status.map((s) => el('li', {}, s)));
}

function applyView(v, pv) {
  if (!pv || typeof pv.plugin !== 'string') return;
  const widgets = Array.isArray(pv.widgets) ? pv.widgets : [];
  if (widgets.length === 0 && !pv.error) v.views.delete(pv.plugin);
  else v.views.set(pv.plugin, { plugin: pv.plugin, widgets, error: pv.error });
  renderViews(v);
}

function renderViews(v) {
  if (v !== view) return;
  const pane = $('views');
  const focused = pane.contains(document.activeElement) ? document.activeElement.dataset.key : null;
  pane.replaceChildren(...[...v.views.values()].map((shown) => viewSection(v, shown)));
  pane.hidden = v.views.size === 0;
  if (focused) [...pane.querySelectorAll('[data-key]')].find((node) => node.dataset.key === focused)?.focus();
}

function viewSection(v, pv) {
  const section = el('section', { class: 'view', 'data-plugin': pv.plugin, 'aria-label': pv.plugin });
  if (pv.error) section.append(el('p', { class: 'error', 'data-error': true }, `${pv.plugin}: `, ...shown(pv.error)));
  for (const widget of pv.widgets) {
    const draw = WIDGETS[widget.widget];
    if (draw) section.append(draw(v, pv.plugin, widget));
  }
  return section;
}

const ENTRY_SAY = { pending: 'not started', in_progress: 'in progress', completed: 'done' };

const WIDGETS = {
  checklist(v, plugin, w) {
    const list = el('ul', { class: 'checklist' });
    for (const entry of w.entries || []) {
      const doing = entry.state === 'in_progress' && entry.active_form ? entry.active_form : entry.title;
      list.append(
        el(
          'li',
          { 'data-state': entry.state },
          el('span', { class: 'box', 'aria-hidden': 'true' }),
          el('span', {}, ...shown(doing), entry.detail ? el('span', { class: 'note detail' }, ...shown(entry.detail)) : null),
          el('span', { class: 'visually-hidden' }, ` (${ENTRY_SAY[entry.state] || entry.state})`),
        ),
      );
    }
    if (!(w.entries || []).length) list.append(el('li', { class: 'note' }, 'Nothing yet.'));
    return widgetBox(w, list);
  },

  choice(v, plugin, w) {
    const options = w.options || [];
    if (w.command) {
      const group = el('div', { class: 'switcher', role: 'group', 'aria-label': w.label });
      for (const option of options) {
        group.append(
          el(
            'button',
            {
              type: 'button',
              'data-value': option.value,
              'data-key': `${plugin}\n${w.id}\n${option.value}`,
              'aria-pressed': String(option.value === w.current),
              title: option.description,
              onclick: () => switchChoice(v, plugin, w.id, option.value),
            },
            ...shown(option.label),
          ),
        );
      }
      return widgetBox(w, group);
    }
    const list = el('ul', { class: 'options' });
    for (const option of options) {
      const now = option.value === w.current;
      list.append(
        el(
          'li',
          { 'data-value': option.value, 'data-current': now ? 'true' : null, 'aria-current': now ? 'true' : null },
          ...shown(option.label),
          option.description ? el('span', { class: 'note detail' }, ...shown(option.description)) : null,
        ),
      );
    }
    return widgetBox(w, list);
  },

  text(v, plugin, w) {
    return widgetBox(w, el('pre', { class: 'text' }, ...shown(w.markdown || '', true)));
  },
};

function widgetBox(w, body) {
  const attrs = { class: `widget ${w.widget}`, 'data-widget': w.widget, 'data-id': w.id };
  if (w.widget === 'choice') {
    attrs['data-current'] = w.current;
    attrs['data-category'] = w.category;
  }
  const current = w.widget === 'choice' && w.current !== undefined ? (w.options || []).find((o) => o.value === w.current) : null;
  return el(
    'div',
    attrs,
    el('h3', {}, ...shown(w.label), current ? el('span', { class: 'badge', 'data-badge': true }, ...shown(current.label)) : null),
    body,
  );
}

async function switchChoice(v, plugin, choice, value) {
  try {
    const switched = await api('POST', `/v1/sessions/${enc(v.id)}/views/${enc(plugin)}/${enc(choice)}`, { value });
    if (v.closed) return;
    if (switched && switched.view) applyView(v, switched.view);
    notice((switched && switched.output) || '');
    refresh(v);
  } catch (error) {
    note(`${plugin}: ${error.message}`, 'error');
  }
}

// --- the composer --------------------------------------------------------------------------

async function send() {
  const v = view;
  const box = $('prompt');
  const text = box.value;
  if (!v || !text.trim()) return;
  if (text.trimStart().startsWith('/')) {
    const line = text.trim();
    const result = await command(v, line);
    add(commandEntry(result.ok, line, result.text || '(no output)'));
    scrollToEnd(true);
    if (result.ok) box.value = '';
    if (result.ok && !v.busy) refresh(v);
    return;
  }
  // Emptied as it is sent, not when the POST answers: the turn's events may show the prompt
  // first. A prompt that was not taken comes back to the box.
  box.value = '';
  try {
    await api('POST', `/v1/sessions/${enc(v.id)}/messages`, { text });
    setBusy(v, true);
    notice('');
  } catch (error) {
    if (!box.value) box.value = text;
    if (error.status === 409) notice('A turn is running in this session: wait for it to end, or cancel it.', true);
    else if (error.status === 429) notice(`Too many turns running: ${error.message}`, true);
    else notice(`Not sent: ${error.message}`, true);
  }
}

async function cancelTurn() {
  if (!view) return;
  try {
    await api('POST', `/v1/sessions/${enc(view.id)}/cancel`);
    setActivity('Cancelling…');
  } catch (error) {
    notice(`Cannot cancel: ${error.message}`, true);
  }
}

// --- plugins ---------------------------------------------------------------------------------

async function loadPlugins() {
  try {
    const { table } = await api('GET', '/v1/plugins');
    $('plugins').textContent = table;
  } catch (error) {
    $('plugins').textContent = '';
    $('plugins-note').textContent = `Cannot list plugins: ${error.message}`;
  }
}

async function reload() {
  const button = $('reload');
  const result = $('plugins-note');
  button.disabled = true;
  result.textContent = 'Reloading…';
  result.dataset.result = 'pending';
  try {
    const { table } = await api('POST', '/v1/reload');
    $('plugins').textContent = table;
    result.textContent = `Reloaded at ${new Date().toLocaleTimeString()}.`;
    result.dataset.result = 'ok';
    if (view && !view.busy) refresh(view);
  } catch (error) {
    result.textContent = `Reload refused: ${error.message}`;
    result.dataset.result = 'error';
  } finally {
    button.disabled = false;
  }
}

// --- wiring ----------------------------------------------------------------------------------

function start() {
  $('signin').addEventListener('submit', (event) => {
    event.preventDefault();
    const candidate = $('token').value.trim();
    if (candidate) signIn(candidate);
  });
  $('signout').addEventListener('click', () => signOut());
  $('new-session').addEventListener('click', createSession);
  $('reload').addEventListener('click', reload);
  $('cancel').addEventListener('click', cancelTurn);
  $('composer').addEventListener('submit', (event) => {
    event.preventDefault();
    send();
  });
  $('prompt').addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing && !event.altKey && !event.ctrlKey && !event.metaKey) {
      event.preventDefault();
      send();
    }
  });
  // A sign-in link (`#token=…`, what `serve` prints when it made a one-time token): the
  // fragment never reaches a server or its logs, and is cleared from the address at once.
  const linked = new URLSearchParams(location.hash.slice(1)).get('token');
  if (linked) {
    history.replaceState(null, '', location.pathname + location.search);
    signIn(linked);
  } else if (token) showApp();
  else $('token').focus();
}

start();
