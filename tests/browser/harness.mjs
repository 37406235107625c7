// What every browser script of these tests does around its own steps: Debian's Chromium
// through playwright-core from the folder scripts/install-browser.sh fills, a fresh profile,
// a deadline for the whole run, a screenshot after each step, and a failure that says which
// step, why, and what the page threw or logged.
//
// Environment: AGENT_HOST_BROWSER_HOME (where playwright-core is), CHROMIUM (the browser,
// default /usr/bin/chromium), PAGE_TIMEOUT_MS (the whole run's limit, default 120000).

import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

// How long one wait inside a step may take.
export const STEP_MS = 30000;

const ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

// A run of `script` (its name, for messages) saving screenshots in `shots`; `fullPage`
// screenshots take the whole page rather than the window.
export function browserRun(script, shots, { fullPage = false } = {}) {
  const home = process.env.AGENT_HOST_BROWSER_HOME || join(homedir(), '.cache', 'agent-host', 'browser');
  // Never a browser of playwright's own: the one Debian packs.
  const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
  const timeout = Number(process.env.PAGE_TIMEOUT_MS || 120000);
  let chromium;
  try {
    ({ chromium } = createRequire(join(home, 'package.json'))('playwright-core'));
  } catch (error) {
    console.error(`${script}: playwright-core is not in ${home} (run scripts/install-browser.sh): ${error.message.split('\n')[0]}`);
    process.exit(1);
  }

  const problems = []; // uncaught errors in the page
  const consoleLines = [];
  let shot = 0;
  let page;
  const deadline = setTimeout(() => fail('the whole run', `took longer than ${timeout} ms`), timeout);

  let failing = false;
  async function fail(step, why) {
    // A second failure (the deadline, while the first one's screenshot is taken) only ends it.
    if (failing) process.exit(1);
    failing = true;
    console.error(`${script}: FAILED at "${step}": ${why}`);
    if (problems.length) console.error(`page errors:\n  ${problems.join('\n  ')}`);
    if (consoleLines.length) console.error(`browser console (last 20):\n  ${consoleLines.slice(-20).join('\n  ')}`);
    if (page) {
      await page.screenshot({ path: join(shots, 'failed.png') }).catch(() => {});
      const notice = await page.textContent('#notice').catch(() => '');
      if (notice) console.error(`page notice: ${notice}`);
      console.error(`screenshot of the failure: ${join(shots, 'failed.png')}`);
    }
    process.exit(1);
  }

  // Runs `body`, fails the run with the step's name if it throws or the page threw, and
  // takes a screenshot.
  async function step(name, body) {
    try {
      await body();
    } catch (error) {
      await fail(name, error.message.split('\n')[0]);
    }
    if (problems.length) await fail(name, 'the page threw');
    shot += 1;
    const file = join(shots, `${String(shot).padStart(2, '0')}-${name.replace(/\W+/g, '-')}.png`);
    await page.screenshot({ path: file, fullPage });
    console.log(`ok ${shot} ${name}  (${file})`);
  }

  // Waits for `fn` (run in the page) to return something truthy, with a message that says what.
  async function until(what, fn, arg, ms = STEP_MS) {
    try {
      return await page.waitForFunction(fn, arg, { timeout: ms, polling: 50 });
    } catch {
      throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    }
  }

  // Opens the browser at `viewport` and runs `steps(page)`; the profile is removed after.
  // Dialogs (a confirm before a delete) are accepted.
  async function launch(viewport, steps) {
    try {
      await mkdir(shots, { recursive: true });
      const profile = await mkdtemp(join(tmpdir(), 'agent-host-chromium-'));
      const context = await chromium.launchPersistentContext(profile, { executablePath, headless: true, args: ARGS, viewport });
      try {
        page = context.pages()[0] || (await context.newPage());
        page.on('pageerror', (error) => problems.push(error.message));
        page.on('console', (line) => consoleLines.push(`${line.type()}: ${line.text()}`));
        page.on('dialog', (dialog) => dialog.accept());
        await steps(page);
      } finally {
        await context.close().catch(() => {});
        await rm(profile, { recursive: true, force: true });
      }
    } catch (error) {
      await fail('the run', error.message.split('\n')[0]);
    }
    clearTimeout(deadline);
  }

  return { step, until, fail, launch };
}
