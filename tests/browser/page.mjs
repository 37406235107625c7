#!/usr/bin/env node
// Drives the web page of `agent-host serve` in headless Chromium, as a person would: sign
// in, create a session, send a prompt, watch a plugin's checklist tick to done, answer an
// approval ("Allow once"), switch a plugin's choice (or see one that only the model moves),
// reopen the session, reload the plugins. A screenshot after each step. It knows no plugin:
// what it checks is drawn from the plugins' views.
//
//   node tests/browser/page.mjs BASE_URL TOKEN SCREENSHOT_DIR
//
// Needs scripts/install-browser.sh (Debian's chromium, playwright-core in a cached folder).
// Environment, all optional:
//   AGENT_HOST_BROWSER_HOME  where install-browser.sh put playwright-core
//   CHROMIUM                 the browser (default /usr/bin/chromium)
//   PAGE_PROMPTS             prompts to send one after another, one a line; each turn's
//                            approvals are answered "once" (default: one prompt)
//   PAGE_SWITCH              the value to switch a choice's switcher to (default: the first
//                            not current); `-` when no view may offer a switcher
//   PAGE_EXPECT_CHOICE       `VALUES|CURRENT`: a choice must list exactly VALUES (space-
//                            separated), CURRENT the current one, read-only
//   PAGE_TIMEOUT_MS          the whole run's limit (default 120000)
//   PAGE_EXPECT_SHOWN        text some approval card must show, such as an escape the page
//                            writes for an invisible character (`\u{202e}`)
//   PAGE_EXPECT_DIFF         `path|line|line…;path|line…`: the diffs drawn, in order, each
//                            with exactly these lines (removed lines before added ones)
//   PAGE_EXPECT_DENIED       a tool whose call a policy refused: its card says so
//   PAGE_EXPECT_REASON_CODE  text some approval's reason shows as inline code (its backticks gone)
// After the checks the session is reopened and one more prompt sent: the model must answer
// it with text. Exit status 0 when every step passed; 1 with the failed step and why on stderr.

import { resolve } from 'node:path';

import { STEP_MS, browserRun } from './harness.mjs';

const [base, token, shots] = process.argv.slice(2);
if (!base || !token || !shots) {
  console.error('usage: node tests/browser/page.mjs BASE_URL TOKEN SCREENSHOT_DIR');
  process.exit(2);
}

const prompts = (process.env.PAGE_PROMPTS || 'Plan the work with todos, then do it.').split('\n').filter((p) => p.trim());
const expectShown = process.env.PAGE_EXPECT_SHOWN || '';
const switchTo = process.env.PAGE_SWITCH || '';
const expectChoice = process.env.PAGE_EXPECT_CHOICE || '';
// `path|line|line…;…`: the files tools changed, drawn as diffs with exactly these lines, in order.
const expectDiff = process.env.PAGE_EXPECT_DIFF || '';
const expectDenied = process.env.PAGE_EXPECT_DENIED || '';
const expectReasonCode = process.env.PAGE_EXPECT_REASON_CODE || '';
const CHECKLIST = '#views [data-widget="checklist"] li[data-state]';
const SWITCH = '#views [data-widget="choice"] .switcher button[data-value]';
// `link`: sign in through the link `serve` prints with a one-time token (`BASE#token=…`),
// not the form.
const byLink = process.env.PAGE_SIGN_IN === 'link';
const { step, until, fail, launch } = browserRun('page.mjs', shots);
let page;

async function run() {
  await step('sign-in page', async () => {
    const address = byLink ? `${base}#token=${token}` : base;
    const response = await page.goto(address, { waitUntil: 'load' });
    if (!response || !response.ok()) throw new Error(`GET ${base} answered ${response && response.status()}`);
    if (!byLink) await page.waitForSelector('#token', { state: 'visible', timeout: STEP_MS });
  });

  await step('signed in', async () => {
    if (!byLink) {
      await page.fill('#token', token);
      await page.press('#token', 'Enter');
    }
    await until('the app to show', () => !document.getElementById('app').hidden || document.getElementById('signin-error').textContent);
    if (byLink) {
      const kept = await page.evaluate(() => [location.hash, sessionStorage.getItem('agent-host.token')]);
      if (kept[0] !== '') throw new Error(`the token stayed in the address: ${kept[0]}`);
      if (kept[1] !== token) throw new Error('the link did not sign this tab in');
    }
    const refused = await page.textContent('#signin-error');
    if (refused) throw new Error(`the page refused to sign in: ${refused}`);
    await until('the session list to load', () => document.querySelector('#sessions li') !== null);
  });

  await step('new session', async () => {
    await page.click('#new-session');
    await until('the new session to open', () => document.querySelector('#session[data-ready="true"]') !== null);
    const focused = await page.evaluate(() => document.activeElement && document.activeElement.id);
    if (focused !== 'prompt') throw new Error(`the message box should have the focus, not #${focused}`);
  });

  await step('shift-enter keeps typing', async () => {
    await page.type('#prompt', 'one');
    await page.keyboard.press('Shift+Enter');
    await page.keyboard.type('two');
    const value = await page.inputValue('#prompt');
    if (value !== 'one\ntwo') throw new Error(`Shift+Enter should start a new line, the box holds ${JSON.stringify(value)}`);
    if (await page.locator('#log .msg.user').count()) throw new Error('Shift+Enter sent the message');
    await page.fill('#prompt', '');
  });

  let approvals = 0;
  let sawOpenTodo = false;
  const approvalTexts = [];
  for (const [index, prompt] of prompts.entries()) {
    const ended = Number(await page.getAttribute('#log', 'data-turns-ended'));
    await step(`prompt ${index + 1} sent`, async () => {
      const before = await page.locator('#log .msg.user').count();
      await page.fill('#prompt', prompt);
      await page.press('#prompt', 'Enter');
      await until('the prompt to show in the conversation', (n) => document.querySelectorAll('#log .msg.user').length > n, before);
      if (await page.inputValue('#prompt')) throw new Error('the message box was not emptied');
    });
    // Until the turn ends: answer each approval once, and note whether a todo was ever open.
    const started = Date.now();
    for (;;) {
      const state = await page.evaluate(([n, selector]) => ({
        ended: Number(document.getElementById('log').dataset.turnsEnded) > n,
        ask: document.querySelector('.approval:not([data-answered]) button[data-answer="once"]') !== null,
        open: document.querySelector(`${selector}:not([data-state="completed"])`) !== null,
      }), [ended, CHECKLIST]);
      sawOpenTodo ||= state.open;
      if (state.ask) {
        approvals += 1;
        await step(`approval ${approvals} asked`, async () => {});
        await step(`approval ${approvals} answered once`, async () => {
          // This card, by its id: the next ask may arrive as soon as this one is answered.
          const id = await page.getAttribute('.approval:not([data-answered])', 'data-approval');
          const card = `.approval[data-approval="${id}"]`;
          // What the card says is what a person reads: no character in it may be invisible
          // or reorder the rest (controls other than line breaks, bidi, zero-width, tags).
          const text = await page.textContent(card);
          const hidden = [...text].filter((c) => /[\p{Cc}\p{Cf}\u2028\u2029]/u.test(c) && c !== '\n' && c !== '\t');
          if (hidden.length) throw new Error(`the approval card holds invisible characters raw: ${hidden.map((c) => `U+${c.codePointAt(0).toString(16)}`).join(' ')}`);
          approvalTexts.push(text);
          await page.click(`${card} button[data-answer="once"]`);
          await until('the approval to be marked answered', (selector) => document.querySelector(selector)?.hasAttribute('data-answered'), card);
        });
        continue;
      }
      if (state.ended) break;
      if (Date.now() - started > STEP_MS * 2) await fail(`prompt ${index + 1}`, 'the turn did not end (no turn_ended event reached the page)');
      await page.waitForTimeout(50);
    }
    await step(`turn ${index + 1} ended`, async () => {
      const reason = await page.getAttribute('#log', 'data-last-turn');
      if (reason !== 'done') throw new Error(`the turn ended "${reason}", not "done"`);
      await until('the page to show the session idle', () => document.getElementById('chat').getAttribute('aria-busy') === 'false');
    });
  }

  await step('checklist all done', async () => {
    const states = await page.$$eval(CHECKLIST, (entries) => entries.map((li) => li.dataset.state));
    if (states.length === 0) throw new Error('no checklist was drawn from the views');
    if (!sawOpenTodo) throw new Error('no entry was ever shown open, so none ticked to done');
    if (states.some((s) => s !== 'completed')) throw new Error(`not every entry is done: ${states.join(', ')}`);
    if (approvals === 0) throw new Error('no approval was asked, so none was answered');
    if (expectShown && !approvalTexts.some((text) => text.includes(expectShown))) {
      throw new Error(`no approval card showed ${expectShown}: ${JSON.stringify(approvalTexts)}`);
    }
    if (expectReasonCode) {
      // A reason's `code` is drawn as code, its backticks gone, as in a reply.
      const reasons = await page.$$eval('#log .approval .reason', (all) => all.map((r) => [r.textContent, [...r.querySelectorAll('code')].map((c) => c.textContent)]));
      if (!reasons.some(([text, codes]) => codes.includes(expectReasonCode) && !text.includes('`'))) {
        throw new Error(`no approval reason showed ${expectReasonCode} as code: ${JSON.stringify(reasons)}`);
      }
    }
    // Model and tool text is shown as text: nothing in it became an element.
    const injected = await page.evaluate(() => document.querySelectorAll('#log img, #log script, #log b, #views img, #views b').length + (window.__pwned ? 1 : 0));
    if (injected) throw new Error('text from the server was rendered as HTML');
    const output = page.locator('details.tool[data-ok]').first();
    if (await output.count() && (await output.getAttribute('open')) !== null) throw new Error('tool output should start collapsed');
  });

  if (expectDiff) {
    await step('diff drawn', async () => {
      const wanted = expectDiff.split(';').map((diff) => diff.split('|'));
      const drawn = await page.$$eval('#log pre.diff', (diffs) => diffs.map((diff) => [
        diff.dataset.path,
        ...[...diff.querySelectorAll('span')].map((span) => span.textContent),
      ]));
      if (JSON.stringify(drawn) !== JSON.stringify(wanted)) throw new Error(`the diffs drawn: ${JSON.stringify(drawn)}`);
      // Each line is marked as what it is.
      const marks = await page.$$eval('#log pre.diff span', (spans) => spans.map((span) => [span.className, span.textContent[0]]));
      const kinds = { added: '+', removed: '-', same: ' ' };
      const wrong = marks.filter(([kind, sign]) => kinds[kind] !== sign);
      if (wrong.length) throw new Error(`lines marked as what they are not: ${JSON.stringify(wrong)}`);
      if (await page.locator('#log pre.diff :is(b, img, script)').count()) throw new Error('a diff line was rendered as HTML');
    });
  }

  if (expectDenied) {
    await step('denied call shown', async () => {
      const cards = await page.$$eval('#log details.tool', (all) => all.map((card) => [card.querySelector('summary code')?.textContent, card.querySelector('.state')?.textContent, card.dataset.ok]));
      const denied = cards.filter(([name]) => name === expectDenied);
      if (denied.length !== 1) throw new Error(`one card of ${expectDenied}, not ${JSON.stringify(cards)}`);
      const [, state, ok] = denied[0];
      if (!/^denied by /.test(state || '') || ok !== 'false') throw new Error(`the refused call reads "${state}" (ok: ${ok})`);
    });
  }

  if (expectChoice) {
    await step('choice shown read-only', async () => {
      const [values, current] = expectChoice.split('|');
      const wanted = values.split(/\s+/).filter(Boolean);
      await until(`a choice listing ${wanted.join(', ')} with ${current} current`, ([list, now]) =>
        [...document.querySelectorAll('#views [data-widget="choice"]')].some((choice) => {
          const shown = [...choice.querySelectorAll('li[data-value]')].map((li) => li.dataset.value);
          const marked = [...choice.querySelectorAll('li[data-current="true"]')].map((li) => li.dataset.value);
          return shown.join(' ') === list.join(' ') && marked.join(' ') === now && choice.dataset.current === now;
        }), [wanted, current]);
    });
  }

  if (switchTo === '-') {
    await step('no switcher offered', async () => {
      const offered = await page.locator(SWITCH).count();
      if (offered) throw new Error(`${offered} switch buttons are drawn, where no view gives a command`);
    });
  } else {
    await step('choice switched', async () => {
      await until('a switcher with two values at least', (selector) => document.querySelectorAll(selector).length >= 2, SWITCH);
      const values = await page.$$eval(SWITCH, (buttons) => buttons.map((b) => [b.dataset.value, b.getAttribute('aria-pressed')]));
      const wanted = switchTo || (values.find(([, pressed]) => pressed !== 'true') || [])[0];
      if (!wanted || !values.some(([value]) => value === wanted)) throw new Error(`no value "${wanted}" among ${values.map(([v]) => v).join(', ')}`);
      const button = `${SWITCH}[data-value="${wanted}"]`;
      await page.click(button);
      await until(`the "${wanted}" button to be pressed`, (selector) => document.querySelector(selector)?.getAttribute('aria-pressed') === 'true', button);
      const pressed = await page.$$eval(SWITCH, (buttons) => buttons.filter((b) => b.getAttribute('aria-pressed') === 'true').length);
      if (pressed !== 1) throw new Error(`${pressed} values pressed at once`);
      await until(`the status badge to say "${wanted}"`, (m) => [...document.querySelectorAll('#status li')].some((li) => li.textContent === m), wanted);
    });
  }

  await step('session reopened', async () => {
    // A fresh load draws the session from GET and follows the stream from the id it gave:
    // the views as they stand, and nothing the stream replays shown twice.
    const checklist = await page.$$eval(CHECKLIST, (entries) => entries.map((li) => li.dataset.state).join(' '));
    const choices = await page.$$eval('#views [data-widget="choice"]', (all) => all.map((c) => c.dataset.current).join(' '));
    const messages = await page.locator('#log .msg.user').count();
    // Every tool call's card and every approval, as drawn while it happened: the same after
    // the reload, rebuilt from what the server kept (its name, its outcome, a refusal, a diff).
    const cards = () => page.$$eval('#log :is(details.tool[data-tool], .approval[data-approval])', (all) => all.map((card) => (
      card.matches('details.tool')
        ? ['tool', card.dataset.tool, card.dataset.ok, card.querySelector('summary').textContent, ...[...card.querySelectorAll('pre.diff span')].map((span) => span.textContent)]
        : ['approval', card.dataset.approval, card.dataset.answered, card.querySelector('[role="status"]').textContent]
    )));
    const drawnBefore = await cards();
    await page.reload({ waitUntil: 'load' });
    await until('the session to reopen', () => document.querySelector('#session[data-ready="true"]') !== null);
    await until('the views to be drawn as before', ([list, current, selector]) =>
      [...document.querySelectorAll(selector)].map((li) => li.dataset.state).join(' ') === list
      && [...document.querySelectorAll('#views [data-widget="choice"]')].map((c) => c.dataset.current).join(' ') === current,
      [checklist, choices, CHECKLIST]);
    // The history draws the cards at once; the events the stream replays complete them.
    let drawnAfter = await cards();
    for (const started = Date.now(); JSON.stringify(drawnAfter) !== JSON.stringify(drawnBefore) && Date.now() - started < STEP_MS / 3;) {
      await page.waitForTimeout(100);
      drawnAfter = await cards();
    }
    if (JSON.stringify(drawnAfter) !== JSON.stringify(drawnBefore)) {
      throw new Error(`the cards changed with the reload: before ${JSON.stringify(drawnBefore)}, after ${JSON.stringify(drawnAfter)}`);
    }
    // One more prompt: its events come after anything the stream would replay, so once its
    // turn has ended, a replayed one would show.
    await page.fill('#prompt', 'One more thing.');
    await page.press('#prompt', 'Enter');
    await until('the turn after reopening to end', () => Number(document.getElementById('log').dataset.turnsEnded) >= 1);
    const again = await page.locator('#log .msg.user').count();
    if (again !== messages + 1) throw new Error(`${messages} messages of the user before reopening and one more sent, ${again} shown`);
    // The session list tells this session by its first prompt, and when it was used.
    await until('the session list to show the first prompt as its title', (first) =>
      [...document.querySelectorAll('#sessions button.open[aria-current="true"]')].some((b) =>
        b.querySelector('.title')?.textContent === first && /^\d+ (s|min) ago$/.test(b.querySelector('.when')?.textContent || '')),
      prompts[0].split(/\s+/).join(' ').trim());
  });

  await step('markdown rendered', async () => {
    const reply = page.locator('#log .msg.assistant .body.markdown').last();
    const drawn = await reply.evaluate((body) => ({
      heading: body.querySelector('h2')?.textContent,
      items: [...body.querySelectorAll('ul > li')].map((li) => li.textContent),
      strong: body.querySelector('li strong')?.textContent,
      code: body.querySelector('pre > code')?.textContent,
      language: body.querySelector('pre > code')?.dataset.language,
      last: body.lastElementChild?.textContent,
      bold: body.querySelectorAll('b, img, script').length,
      table: [...body.querySelectorAll('table tr')].map((row) => [...row.querySelectorAll('th, td')].map((cell) => `${cell.tagName}:${cell.textContent}`)),
    }));
    const wanted = {
      heading: 'Next steps',
      items: ['a bold step', 'code and <b>not bold</b>'],
      strong: 'bold',
      code: 'let tag = "<b>";',
      language: 'rust',
      last: 'Anything else?',
      bold: 0,
      table: [['TH:name', 'TH:size'], ['TD:a <b>', 'TD:1'], ['TD:b', 'TD:22']],
    };
    if (JSON.stringify(drawn) !== JSON.stringify(wanted)) throw new Error(`the reply's markdown: ${JSON.stringify(drawn)}`);
    // A reply of markup and `window.__name` underscores marks nothing: one paragraph of its text.
    const first = await page.locator('#log .msg.assistant .body.markdown').first().evaluate((body) =>
      [[...body.querySelectorAll('*')].map((element) => element.tagName).join(' '), body.textContent]);
    if (first[0] !== 'P' || !first[1].includes('"window.__pwned=1"><b>bold?</b><script>window.__pwned=1</script>')) {
      throw new Error(`the first reply was marked up: ${JSON.stringify(first)}`);
    }
  });

  await step('help keeps its columns', async () => {
    await page.fill('#prompt', '/help');
    await page.press('#prompt', 'Enter');
    await until('the help to show', () => [...document.querySelectorAll('#log .msg.command')].some((m) => m.textContent.includes('/approvals')));
    // Its lines as written, each command's description starting at the same column.
    const help = await page.locator('#log .msg.command').last().evaluate((entry) => {
      const pre = entry.querySelector('pre.output');
      return pre && { text: pre.textContent, font: getComputedStyle(pre).fontFamily, space: getComputedStyle(pre).whiteSpace };
    });
    if (!help) throw new Error('the help is not preformatted');
    if (!/mono/i.test(help.font) || !/^pre/.test(help.space)) throw new Error(`the help is set in ${help.font}, white-space ${help.space}`);
    const columns = help.text.split('\n').filter((line) => /^\/\w+\s{2,}\S/.test(line)).map((line) => line.search(/\s{2,}\S/) + line.slice(line.search(/\s{2,}\S/)).search(/\S/));
    if (columns.length < 3 || new Set(columns).size !== 1) throw new Error(`the help's descriptions start at columns ${columns}`);
  });

  await step('narrow window', async () => {
    await page.setViewportSize({ width: 420, height: 800 });
    // The conversation takes the window's width and most of its height, nothing is wider
    // than the window, and the message box is there to type in.
    const sizes = await page.evaluate(() => {
      const box = (id) => document.getElementById(id).getBoundingClientRect();
      return {
        width: Math.round(box('log').width),
        height: Math.round(box('log').height),
        page: document.documentElement.scrollWidth,
        prompt: Math.round(box('prompt').width),
      };
    });
    if (sizes.width < 360 || sizes.height < 400 || sizes.page > 420 || sizes.prompt < 250) {
      throw new Error(`at 420 by 800 px: ${JSON.stringify(sizes)}`);
    }
  });

  await step('plugins reloaded', async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await until('the plugin list', () => document.getElementById('plugins').textContent.trim() !== '');
    await page.click('#reload');
    const result = await until('the reload to finish', () => {
      const state = document.getElementById('plugins-note').dataset.result;
      return state && state !== 'pending' ? state : null;
    });
    if ((await result.jsonValue()) !== 'ok') throw new Error(`reload: ${await page.textContent('#plugins-note')}`);
  });

  await step('signed out', async () => {
    await page.click('#signout');
    await until('the sign-in form', () => !document.getElementById('signin').hidden);
    if (await page.evaluate(() => sessionStorage.getItem('agent-host.token'))) throw new Error('the token outlived signing out');
  });
}

launch({ width: 1280, height: 800 }, async (opened) => {
  page = opened;
  await run();
}).then(() => console.log(`page.mjs: all steps passed; screenshots in ${resolve(shots)}`));
