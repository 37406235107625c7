// Child agents (contract 0.2.8) as the page draws them: each a card nested in the tool call
// that started it — its name, its session, its state, its own tool calls a line each, what it
// says as it works, the approvals its calls need, and its answer. A grandchild's card nests in
// its parent's call line the same way. Every word shown comes from the events, as text.
//
// A child's events come on its parent's stream wrapped in `subagent` events (a grandchild's
// twice): `childEvent` unwraps them to the child they belong to. It uses app.js's helpers
// (el, shown, add, toolCard, addApproval, approvalAnswered, renderMarkdown), which are there by
// the time any event arrives.

'use strict';

// Characters of a session id a card shows: its last ones, since ids start with the time they
// were made and children started together share their first characters.
const CHILD_ID_SHOWN = 8;
// Characters of a child's latest words kept for its live line.
const CHILD_SAID = 400;

const CHILD_STATES = { running: 'running…', done: 'done', failed: 'failed', cancelled: 'cancelled', pending: 'pending' };

// One event of the session's stream that concerns a child (`subagent_started`, `subagent`,
// `subagent_ended`), drawn on its card; `restoring` when it is replayed for a turn that ended.
// eslint-disable-next-line no-unused-vars
function childEvent(v, type, e, restoring = false) {
  let scope = null; // the child whose event it is; null for the session's own
  while (type === 'subagent' && e && e.event) {
    scope = v.children.get(e.session_id) || startChild(v, scope, { session_id: e.session_id, agent: e.agent, prompt: '' });
    e = e.event;
    type = e.type;
  }
  if (type === 'subagent_started') startChild(v, scope, e);
  else if (type === 'subagent_ended') endChild(v, scope, e);
  else if (scope) ownEvent(v, scope, type, e, restoring);
}

// A child's turn starts: its card, made under the call that started it (or found again, for a
// later turn of the same child).
function startChild(v, scope, e) {
  let child = v.children.get(e.session_id);
  if (!child) {
    child = childCard(e);
    v.children.set(e.session_id, child);
    placeChild(v, scope, e.call_id, child.node);
  }
  if (e.prompt) child.prompt.replaceChildren(...shown(e.prompt.trim()));
  child.said = '';
  setChildState(child, 'running');
  return child;
}

function childCard(e) {
  const id = String(e.session_id);
  const state = el('span', { class: 'state' });
  const node = el(
    'section',
    { class: 'child', 'data-child': id, 'data-agent': e.agent, 'aria-label': `Child agent ${e.agent}` },
    el(
      'header',
      {},
      el('strong', { class: 'agent' }, ...shown(e.agent)),
      ' ',
      el('span', { class: 'note mono', title: `session ${id}` }, ...shown(`…${id.slice(-CHILD_ID_SHOWN)}`)),
      ' — ',
      state,
    ),
  );
  const prompt = el('p', { class: 'prompt' });
  const calls = el('ol', { class: 'calls' });
  const live = el('p', { class: 'live note', 'aria-live': 'polite' });
  const answer = el('div', { class: 'answer', hidden: true });
  const tokens = el('p', { class: 'tokens note', hidden: true });
  node.append(prompt, calls, live, answer, tokens);
  return { id, agent: e.agent, node, state, prompt, calls, live, answer, tokens, tools: new Map(), said: '' };
}

// Where a child's card goes: in the call that started it (the session's own tool card, or its
// parent child's call line), else at the end of its parent's card or of the conversation.
function placeChild(v, scope, callId, node) {
  if (!scope) {
    const card = callId ? v.tools.get(callId) : undefined;
    if (!card) return add(node);
    card.node.insertBefore(node, card.output);
    card.node.open = true;
    return node;
  }
  const line = callId ? scope.tools.get(callId) : undefined;
  if (line) line.node.append(node);
  else scope.calls.after(node);
  return node;
}

function setChildState(child, state) {
  child.node.dataset.state = state;
  child.state.textContent = CHILD_STATES[state] || state;
  child.state.className = `state${state === 'done' ? ' state-ok' : state === 'running' ? '' : ' state-bad'}`;
}

function endChild(v, scope, e) {
  const child = v.children.get(e.session_id) || startChild(v, scope, { session_id: e.session_id, agent: e.agent, prompt: '' });
  setChildState(child, e.state);
  child.live.textContent = '';
  child.answer.hidden = !e.answer;
  if (e.state === 'done') {
    child.answer.classList.add('markdown');
    child.answer.replaceChildren(...renderMarkdown(e.answer || '', shown));
  } else {
    child.answer.classList.remove('markdown');
    child.answer.replaceChildren(el('pre', {}, ...shown(e.answer || '', true)));
  }
  child.tokens.hidden = false;
  child.tokens.textContent = `${Number(e.tokens || 0).toLocaleString('en')} tokens`;
}

// One of the child's own events.
function ownEvent(v, child, type, e, restoring) {
  switch (type) {
    case 'model_request':
      child.said = '';
      child.live.textContent = 'thinking…';
      break;
    case 'assistant_delta':
      child.said = (child.said + e.text).slice(-CHILD_SAID);
      saying(child, child.said);
      break;
    case 'assistant_message':
      if (e.text) saying(child, e.text);
      break;
    case 'tool_call': {
      const line = callLine(child, e.id, e.name);
      line.arg.replaceChildren(...shown(keyArgument(e.arguments)));
      setLine(line, 'running…');
      break;
    }
    case 'tool_result': {
      const line = callLine(child, e.id, e.name);
      line.node.dataset.ok = String(Boolean(e.ok));
      if (!line.denied) setLine(line, e.ok ? 'ok' : 'failed', e.ok ? 'ok' : 'bad');
      line.output.textContent = e.output;
      line.output.hidden = false;
      break;
    }
    case 'tool_decision':
      if (e.decision === 'deny') {
        const line = callLine(child, e.id, e.name);
        line.denied = true;
        setLine(line, `denied by ${e.decided_by}: ${e.reason}`, 'bad');
      }
      break;
    case 'file_edited':
      callLine(child, e.id, 'tool').node.append(el('div', { class: 'note' }, 'edited ', el('code', {}, ...shown(e.path))));
      break;
    case 'approval_requested': {
      const line = callLine(child, e.id, e.name);
      setLine(line, 'waiting for your answer');
      const place = (card) => line.node.append(card);
      addApproval(v, e, { agent: child.id, agentName: child.agent, place, restored: restoring });
      break;
    }
    case 'approval_answered':
      approvalAnswered(v, e, child.id);
      break;
    case 'error':
      child.calls.append(el('li', { class: 'error' }, ...shown(e.plugin ? `${e.plugin}: ${e.message}` : e.message)));
      break;
    default:
      break; // its views, its plugins' events and the like are its own session's
  }
}

// The last line of what the child says, on its live line.
function saying(child, text) {
  const lines = String(text).split('\n').map((line) => line.trim()).filter(Boolean);
  child.live.replaceChildren(...shown(lines.length ? lines[lines.length - 1] : ''));
}

// The line of the child's call `id`, made when first seen.
function callLine(child, id, name) {
  let line = child.tools.get(id);
  if (!line) {
    const state = el('span', { class: 'state' });
    const arg = el('span', { class: 'arg' });
    // Its output opens under it on a click, as a tool card's does; a grandchild's card goes
    // after it, in sight.
    const output = el('pre', { class: 'output', hidden: true });
    const summary = el('summary', {}, el('code', {}, ...shown(name)), ' ', arg, ' — ', state);
    const node = el('li', { 'data-tool': id }, el('details', { class: 'call' }, summary, output));
    line = { node, state, arg, output, denied: false };
    child.tools.set(id, line);
    child.calls.append(node);
  }
  return line;
}

function setLine(line, text, tone = '') {
  line.state.textContent = text;
  line.state.className = `state${tone ? ` state-${tone}` : ''}`;
}

// The argument a person wants to see on one line, as the console picks it: a known key's
// text, else the first text, else the arguments as JSON; cut.
function keyArgument(args) {
  const KEYS = ['command', 'cmd', 'path', 'file', 'file_path', 'pattern', 'query', 'url', 'title'];
  let text = '';
  if (args && typeof args === 'object' && !Array.isArray(args)) {
    const known = KEYS.find((key) => typeof args[key] === 'string');
    const first = Object.values(args).find((value) => typeof value === 'string');
    text = known ? args[known] : first !== undefined ? first : JSON.stringify(args);
  } else if (args !== undefined && args !== null) {
    text = typeof args === 'string' ? args : JSON.stringify(args);
  }
  text = String(text).replace(/\s+/g, ' ').trim();
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
}
