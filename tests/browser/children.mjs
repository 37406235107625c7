#!/usr/bin/env node
// Drives the web page of `agent-host serve` in headless Chromium through a turn whose tool
// call starts a child agent: the child's card must appear nested in that call's card, with
// its name, its own calls, an approval it needs (answered "once" in the card), its state and
// its answer; after a reload of the page the card must be drawn again, as it was. A
// screenshot after each step.
//
//   node tests/browser/children.mjs BASE_URL TOKEN SCREENSHOT_DIR
//
// Needs scripts/install-browser.sh. Environment:
//   CHILD_PROMPT   the prompt to send (default: "Ask the child.")
//   CHILD_AGENT    the child's agent name (required)
//   CHILD_CALLS    the tools the child calls, in order, comma-separated (required)
//   CHILD_ANSWER   text the child's answer shows (required)
//   CHILD_ASKS     how many of its calls need an approval (default 1)
//   CHROMIUM, AGENT_HOST_BROWSER_HOME, PAGE_TIMEOUT_MS  as for page.mjs
// Exit status 0 when every step passed; 1 with the failed step and why on stderr.

import { STEP_MS, browserRun } from './harness.mjs';

const [base, token, shots] = process.argv.slice(2);
const agent = process.env.CHILD_AGENT || '';
const calls = (process.env.CHILD_CALLS || '').split(',').filter(Boolean);
const answer = process.env.CHILD_ANSWER || '';
if (!base || !token || !shots || !agent || !calls.length || !answer) {
  console.error('usage: CHILD_AGENT=… CHILD_CALLS=… CHILD_ANSWER=… node tests/browser/children.mjs BASE_URL TOKEN SCREENSHOT_DIR');
  process.exit(2);
}
const prompt = process.env.CHILD_PROMPT || 'Ask the child.';
const asks = Number(process.env.CHILD_ASKS || 1);
// The child's card, where it must be: in the card of the call that started it.
const CARD = `#log details.tool[data-tool] > section.child[data-agent="${agent}"]`;

const { step, until, launch } = browserRun('children.mjs', shots, { fullPage: true });
let page;

// What the child's card shows, read from the page.
function card() {
  return page.evaluate((selector) => {
    const node = document.querySelector(selector);
    if (!node) return null;
    return {
      state: node.dataset.state,
      header: node.querySelector('header').textContent,
      calls: [...node.querySelectorAll(':scope > .calls > li > details > summary > code')].map((code) => code.textContent),
      answer: node.querySelector('.answer').textContent,
      answered: [...node.querySelectorAll('.approval[data-answered]')].length,
      tokens: node.querySelector('.tokens').textContent,
      call: node.closest('details.tool').dataset.tool,
    };
  }, CARD);
}

// The card as a turn that ended leaves it.
async function checkEnded(after) {
  const shown = await card();
  if (!shown) throw new Error(`no child card ${CARD} ${after}`);
  if (shown.state !== 'done') throw new Error(`the child's card says "${shown.state}", not "done" ${after}`);
  if (!shown.header.includes(agent)) throw new Error(`the card's header names no ${agent}: ${shown.header}`);
  if (JSON.stringify(shown.calls) !== JSON.stringify(calls)) throw new Error(`the child's calls drawn: ${JSON.stringify(shown.calls)}`);
  if (!shown.answer.includes(answer)) throw new Error(`the child's answer shows "${shown.answer}", not "${answer}"`);
  if (shown.answered !== asks) throw new Error(`${shown.answered} answered approvals in the card, not ${asks}`);
  if (!/\d tokens/.test(shown.tokens)) throw new Error(`no tokens on the card: "${shown.tokens}"`);
  return shown;
}

async function run() {
  await step('signed in', async () => {
    await page.goto(base, { waitUntil: 'load' });
    await page.fill('#token', token);
    await page.press('#token', 'Enter');
    await until('the session list to load', () => document.querySelector('#sessions li') !== null);
    await page.click('#new-session');
    await until('the new session to open', () => document.querySelector('#session[data-ready="true"]') !== null);
  });

  await step('prompt sent', async () => {
    await page.fill('#prompt', prompt);
    await page.press('#prompt', 'Enter');
    await until('the child card to appear in its call', (selector) => document.querySelector(selector) !== null, CARD);
  });

  for (let n = 1; n <= asks; n += 1) {
    await step(`child approval ${n} answered`, async () => {
      const ask = `${CARD} .approval[data-agent]:not([data-answered])`;
      await until('the child to ask in its card', (selector) => document.querySelector(selector) !== null, ask);
      const text = await page.textContent(ask);
      if (!text.includes(agent)) throw new Error(`the approval names no ${agent}: ${text}`);
      await page.click(`${ask} button[data-answer="once"]`);
      await until('the answer to be taken', (selector) => document.querySelectorAll(selector).length >= 1, `${CARD} .approval[data-answered]`);
      const said = await page.textContent(`${CARD} .approval[data-answered] [role="status"]`);
      if (!said.startsWith('Allowed once')) throw new Error(`the answer was not taken: ${said}`);
    });
  }

  let drawn;
  await step('turn ended with the child done', async () => {
    await until('the turn to end', () => Number(document.getElementById('log').dataset.turnsEnded) > 0, undefined, STEP_MS * 2);
    const reason = await page.getAttribute('#log', 'data-last-turn');
    if (reason !== 'done') throw new Error(`the turn ended "${reason}", not "done"`);
    drawn = await checkEnded('after the turn');
  });

  await step('reopened, the child drawn again', async () => {
    await page.reload({ waitUntil: 'load' });
    await until('the session to reopen', () => document.querySelector('#session[data-ready="true"]') !== null);
    await until('the child card to be drawn again', (selector) => document.querySelector(selector)?.dataset.state === 'done', CARD);
    const again = await checkEnded('after reopening');
    if (again.call !== drawn.call) throw new Error(`the card moved from call ${drawn.call} to ${again.call}`);
  });
}

launch({ width: 1280, height: 900 }, async (opened) => {
  page = opened;
  await run();
}).then(() => process.exit(0));
