// `npm run screenshots`: starts a Core with the shipped plugins plus two example plugins (an MQTT
// thermostat through the SDK, a subprocess garage door that requires confirmation), has a household use
// it (a user token for alice with a profile, a chat order, a few direct calls), then drives Debian's
// Chromium through every page of the dashboard and writes docs/screenshots/<page>.png.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { loadConfig } from '../src/config/load.js';
import { silentLogger } from '../src/log.js';
import { startCore, type RunningCore } from '../src/main.js';
import { findPackageRoot } from '../src/kit/package-root.js';
import { connectPlugin, silentSdkLogger, type ConnectedPlugin } from '../src/sdk/index.js';
import { launchChromium } from './browser/chromium.js';

const ROOT = findPackageRoot();
const OUT = join(ROOT, 'docs', 'screenshots');
const VIEWPORT = { width: 1280, height: 820 };

async function api<T>(core: RunningCore, method: string, path: string, body?: unknown, token = core.adminToken): Promise<T> {
  const res = await fetch(`${core.httpUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  // A failed plugin call is part of the story (its outcome shows on the pages); anything else is a bug.
  if (res.status >= 500 && !path.startsWith('/v1/plugins/')) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : {}) as T;
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  console.warn(`screenshots: ${what} not reached within ${timeoutMs} ms; going on`);
  return false;
}

/** A small but varied household: every plugin type the dashboard shows differently. */
async function furnish(core: RunningCore): Promise<{ aliceToken: string; thermostat: ConnectedPlugin }> {
  const thermostat = await connectPlugin({
    url: `mqtt://127.0.0.1:${core.mqttPort ?? 0}`,
    descriptor: {
      id: 'thermostat',
      name: 'Living room thermostat',
      description: 'Reads and sets the living room heating.',
      version: '2.1.0',
      examples: ['make it warmer in the living room', 'set the heating to 21 degrees'],
      capabilities: [
        {
          id: 'set_temperature',
          name: 'Set temperature',
          description: 'Set the target temperature and the heating mode.',
          parameters: [
            { name: 'celsius', type: 'number', description: 'Target temperature in °C (5-30).' },
            { name: 'mode', type: 'string', enum: ['comfort', 'eco', 'away'], required: false, default: 'comfort', description: 'Heating mode.' },
            { name: 'rooms', type: 'array', required: false, description: 'Other rooms to set too.' },
          ],
        },
        { id: 'read', name: 'Read', description: 'Current and target temperature.', parameters: [] },
      ],
    },
    handlers: {
      set_temperature: ({ celsius, mode }) => {
        if (Number(celsius) > 30) throw new Error(`${String(celsius)} °C is above the thermostat's limit of 30 °C`);
        return `Living room set to ${String(celsius)} °C (${String(mode ?? 'comfort')}).`;
      },
      read: () => ({ text: 'Living room: 19.5 °C, target 21 °C.', data: { current: 19.5, target: 21 } }),
    },
    log: silentSdkLogger(),
  });
  const script =
    'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=JSON.parse(s);process.stdout.write(JSON.stringify({success:true,text:"Garage door "+(r.capability_id==="open"?"opening.":"closed.")}))})';
  await api(core, 'POST', '/api/plugins/register', {
    id: 'garage',
    name: 'Garage door',
    description: 'Opens and closes the garage door.',
    type: 'subprocess',
    config: { command: process.execPath, args: ['-e', script] },
    capabilities: [
      {
        id: 'open',
        name: 'Open',
        description: 'Open the garage door.',
        requires_confirmation: true,
        parameters: [{ name: 'leave_open_min', type: 'integer', required: false, description: 'Close again after this many minutes.' }],
      },
      { id: 'close', name: 'Close', description: 'Close the garage door.', parameters: [] },
    ],
  });
  const { token: aliceToken } = await api<{ token: string }>(core, 'POST', '/api/users', { user_id: 'alice' });
  await api(core, 'PUT', '/api/profiles/alice', { profile: { name: 'Alice', address: '12 Oak St', phone: '555-0100', default_payment: 'card' } });
  // Some history for the audit log and the "last outcome" column.
  await api(core, 'POST', '/v1/plugins/time/tools/now/run', { timezone: 'Europe/Berlin' });
  await api(core, 'POST', '/v1/plugins/garage/tools/close/run', {});
  await api(core, 'POST', '/v1/plugins/garage/tools/open/run', {});
  await api(core, 'POST', '/v1/plugins/garage/tools/open/run?confirmed=true', { leave_open_min: 5 });
  await api(core, 'POST', '/v1/plugins/thermostat/tools/read/run', {});
  await api(core, 'POST', '/v1/plugins/thermostat/tools/set_temperature/run', { celsius: 35 });
  await api(core, 'POST', '/api/messages', { channel: 'kitchen', text: 'what time is it?' }, aliceToken);
  await api(core, 'POST', '/api/messages', { channel: 'kitchen', text: 'save a note: call the plumber' }, aliceToken);
  return { aliceToken, thermostat };
}

async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(OUT, `${name}.png`), fullPage: false });
  console.log(`wrote docs/screenshots/${name}.png`);
}

async function signIn(page: Page, url: string, token: string): Promise<void> {
  await page.goto(url);
  await page.getByLabel('Token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('.signed-in').waitFor();
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-screenshots-'));
  const loaded = loadConfig({
    env: {},
    overrides: {
      data_dir: dataDir,
      log_level: 'silent',
      broker: { port: 0, ws_port: 0 },
      http: { port: 0 },
      plugins: { dir: join(ROOT, 'plugins'), hot_reload: false },
      retrieval: { enabled: true },
    },
  });
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
  const core = await startCore({ config: loaded.config, log: silentLogger() });
  let thermostat: ConnectedPlugin | undefined;
  const browser = await launchChromium();
  try {
    mkdirSync(OUT, { recursive: true });
    // Hybrid retrieval shows both score parts on the search page; it needs Chroma and the encoder up.
    await until('hybrid retrieval', async () => (await api<{ retrieval: { state: string } }>(core, 'GET', '/api/status')).retrieval.state === 'ok', 120_000);
    const furnished = await furnish(core);
    thermostat = furnished.thermostat;
    const url = `${core.httpUrl}/`;

    const admin = await browser.newPage({ viewport: VIEWPORT });
    await admin.goto(url);
    await admin.getByLabel('Token').waitFor();
    await shoot(admin, 'sign-in');

    await signIn(admin, url, core.adminToken);
    await admin.locator('[data-feed="live"]').waitFor();
    await admin.locator('tr[data-plugin="thermostat"]').waitFor();
    await shoot(admin, 'plugins');

    await admin.goto(`${url}#/plugins/thermostat`);
    const form = admin.locator('form[data-capability="set_temperature"]');
    await form.getByLabel('celsius').fill('21.5');
    await form.getByLabel('rooms').fill('["kitchen"]');
    await form.getByRole('button', { name: 'Run' }).click();
    await form.getByTestId('result').waitFor();
    await shoot(admin, 'plugin');

    await admin.goto(`${url}#/plugins/garage`);
    const open = admin.locator('form[data-capability="open"]');
    await open.getByLabel('leave_open_min').fill('10');
    await open.getByRole('button', { name: 'Review and run' }).click();
    await open.getByTestId('confirm').waitFor();
    await open.getByTestId('confirm').scrollIntoViewIfNeeded();
    await shoot(admin, 'plugin-confirm');

    await admin.goto(`${url}#/search`);
    await admin.getByLabel('Search plugins').fill('buy me some milk');
    await admin.getByRole('button', { name: 'Search' }).click();
    await admin.getByTestId('search-results').waitFor();
    await shoot(admin, 'search');

    const alice = await browser.newPage({ viewport: VIEWPORT });
    await signIn(alice, url, furnished.aliceToken);
    await alice.getByLabel('Message').fill('buy me some milk');
    await alice.getByLabel('Message').press('Enter');
    await alice.locator('[data-kind="question"]').waitFor();
    await alice.getByRole('button', { name: 'Yes' }).click();
    await alice.locator('.message.homeclaw[data-kind="answer"]', { hasText: 'Order placed' }).waitFor();
    await shoot(alice, 'chat');

    await alice.goto(`${url}#/profile`);
    await alice.locator('form.profile').waitFor();
    await shoot(alice, 'profile');

    await admin.goto(`${url}#/invocations`);
    await admin.locator('tr[data-entry]', { hasText: 'place_order' }).first().waitFor();
    await shoot(admin, 'invocations');
  } finally {
    await browser.close();
    await thermostat?.close();
    await core.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
