// The web dashboard in a real browser: Debian's Chromium driven by playwright-core against a real Core
// (the shipped buy and time plugins, a user with a profile). Sign-in (a wrong token refused, the admin
// and a user token), the plugin list updating live from the event feed, "try it" with its confirmation
// step, a chat order confirmed with "yes", search scores, recent invocations, and the whole dashboard
// under Home Assistant's ingress path prefix without a token. Every wait is for a selector or state.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { listOrders } from '../../plugins/buy/index.js';
import { launchChromium } from '../../scripts/browser/chromium.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { startIngressProxy, type IngressProxy } from '../helpers/ingress-proxy.js';
import { ensureWebBuilt } from '../helpers/web-build.js';
import { ensureBuilt, makePluginsDir } from '../e2e/helpers.js';

const PROXY_ADDRESS = '127.0.0.2';
let core: TestCore;
let browser: Browser;
let pluginsDir: string;
let aliceToken: string;
const problems: string[] = [];
const pages: Page[] = [];

const ECHO =
  'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=JSON.parse(s);process.stdout.write(JSON.stringify({success:true,text:r.capability_id+" done"}))})';
const plugin = (id: string, requiresConfirmation = false): Record<string, unknown> => ({
  id,
  name: `Test ${id}`,
  description: `The ${id} test plugin.`,
  type: 'subprocess',
  config: { command: process.execPath, args: ['-e', ECHO] },
  capabilities: [
    {
      id: 'open',
      name: 'Open',
      description: 'Open it.',
      requires_confirmation: requiresConfirmation,
      parameters: [{ name: 'minutes', type: 'integer', required: false }],
    },
  ],
});

beforeAll(async () => {
  await Promise.all([ensureBuilt(), ensureWebBuilt()]);
  pluginsDir = makePluginsDir({ shipped: [{ id: 'buy' }, { id: 'time' }] });
  core = await startTestCore({ pluginsDir, overrides: { dashboard: { ingress_proxy: PROXY_ADDRESS } } });
  aliceToken = (await core.api<{ token: string }>('POST', '/api/users', { user_id: 'alice' })).body.token;
  await core.api('PUT', '/api/profiles/alice', { profile: { name: 'Alice', address: '12 Oak St', phone: '555-0100' } });
  browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await core?.cleanup();
  if (pluginsDir) rmSync(pluginsDir, { recursive: true, force: true });
});

afterEach(async () => {
  for (const page of pages.splice(0)) await page.context().close();
  // A blocked script or style (content security policy) or an uncaught error fails the test that caused it.
  expect(problems.splice(0)).toEqual([]);
});

/** A page in a fresh browser profile (its own sessionStorage), watched for errors. */
async function openPage(url = `${core.httpUrl}/`, initScript?: () => void): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  if (initScript) await page.addInitScript(initScript);
  page.setDefaultTimeout(30_000);
  pages.push(page);
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    // A refused sign-in is a 401 the browser reports as a failed resource load: expected, not a problem.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(`console: ${message.text()}`);
  });
  await page.goto(url);
  return page;
}

async function signIn(page: Page, token: string): Promise<void> {
  await page.getByLabel('Token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('.signed-in').waitFor();
}

const navLabels = (page: Page): Promise<string[]> => page.locator('.topbar nav a').allTextContents();

describe('sign-in', () => {
  it('refuses a wrong token and keeps no trace of it', async () => {
    const page = await openPage();
    await page.getByLabel('Token').fill('not-a-valid-token-000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('This token was not accepted.');
    expect(await page.evaluate('sessionStorage.getItem("homeclaw.token")')).toBeNull();
    expect(await page.locator('.signed-in').count()).toBe(0);
  }, 120_000);

  it('signs the admin in, keeps the token out of the URL, survives a reload, signs out', async () => {
    const page = await openPage();
    await signIn(page, core.adminToken);
    expect(await page.locator('.signed-in').textContent()).toBe('Admin');
    expect(await navLabels(page)).toEqual(['Plugins', 'Invocations', 'Search', 'Chat', 'Profiles']);
    expect(page.url()).not.toContain(core.adminToken);
    // Kept for this tab only: sessionStorage, never localStorage or a cookie.
    expect(await page.evaluate('sessionStorage.getItem("homeclaw.token")')).toBe(core.adminToken);
    expect(await page.evaluate('localStorage.length')).toBe(0);
    expect(await page.context().cookies()).toEqual([]);
    await page.reload();
    await page.locator('tr[data-plugin="buy"]').waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Token').waitFor();
    expect(await page.evaluate('sessionStorage.getItem("homeclaw.token")')).toBeNull();
  }, 120_000);

  it('gives a user token chat, search and its own profile only', async () => {
    const page = await openPage();
    await signIn(page, aliceToken);
    expect(await page.locator('.signed-in').textContent()).toBe('User · alice');
    expect(await navLabels(page)).toEqual(['Chat', 'Search', 'My profile']);
    await page.goto(`${core.httpUrl}/#/plugins`);
    await page.getByRole('heading', { name: 'Chat' }).waitFor();
    expect(await page.locator('table.plugins').count()).toBe(0);
    await page.getByRole('link', { name: 'My profile' }).click();
    const phone = page.getByLabel('Value of phone');
    expect(await phone.inputValue()).toBe('555-0100');
    await phone.fill('555-0199');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    expect((await core.api<{ profile: Record<string, string> }>('GET', '/api/profiles/alice')).body.profile['phone']).toBe('555-0199');
    await core.api('POST', '/api/profiles/alice', { set: { phone: '555-0100' } });
  }, 120_000);

  it('ends the session when its token is removed', async () => {
    const { token } = (await core.api<{ token: string }>('POST', '/api/users', { user_id: 'bob' })).body;
    const page = await openPage();
    await signIn(page, token);
    expect((await core.api('DELETE', '/api/users/bob')).status).toBe(200);
    await page.getByLabel('Message').fill('what time is it?');
    await page.getByLabel('Message').press('Enter');
    await page.getByLabel('Token').waitFor();
    expect(await page.locator('.notice').textContent()).toContain('no longer accepts this token');
    expect(await page.evaluate('sessionStorage.getItem("homeclaw.token")')).toBeNull();
  }, 120_000);
});

describe('plugins', () => {
  it('lists the plugins and updates the list live from the event feed', async () => {
    const page = await openPage();
    await signIn(page, core.adminToken);
    await page.locator('[data-feed="live"]').waitFor();
    for (const id of ['buy', 'time']) await page.locator(`tr[data-plugin="${id}"]`).waitFor();

    expect((await core.api('POST', '/api/plugins/register', plugin('lamp'))).status).toBe(201);
    const row = page.locator('tr[data-plugin="lamp"]');
    await row.waitFor();
    expect(await row.locator('.type').textContent()).toBe('subprocess');
    expect(await row.locator('[data-state]').getAttribute('data-state')).toBe('online');
    expect(await row.getByTestId('last-outcome').textContent()).toContain('never called');

    expect((await core.api('POST', '/v1/plugins/lamp/tools/open/run', { minutes: 5 })).status).toBe(200);
    await row.locator('[data-outcome="ok"]').waitFor();
    expect((await core.api('POST', '/v1/plugins/lamp/tools/open/run', { minutes: 'soon' })).status).toBe(400);
    await row.locator('[data-outcome="invalid_params"]').waitFor();

    expect((await core.api('POST', '/api/plugins/unregister', { plugin_id: 'lamp' })).status).toBe(200);
    await row.waitFor({ state: 'detached' });
  }, 120_000);

  it('shows the feed live in a tab that does not paint (a background tab), where effects run late', async () => {
    // A background tab gets no animation frames, so the page's effects run only after the renderer's
    // fallback timer: the event stream is often open before anything listens to its state.
    const page = await openPage(undefined, () => {
      (globalThis as unknown as { requestAnimationFrame: () => number }).requestAnimationFrame = () => 0;
    });
    await signIn(page, core.adminToken);
    await page.locator('[data-feed="live"]').waitFor({ timeout: 10_000 });
    expect((await core.api('POST', '/api/plugins/register', plugin('blind'))).status).toBe(201);
    await page.locator('tr[data-plugin="blind"]').waitFor();
    expect((await core.api('POST', '/api/plugins/unregister', { plugin_id: 'blind' })).status).toBe(200);
  }, 120_000);

  it('runs a capability from the form built from its schema and shows the result', async () => {
    const page = await openPage();
    await signIn(page, core.adminToken);
    await page.locator('a.plugin-name', { hasText: 'Time' }).click();
    const form = page.locator('form[data-capability="now"]');
    await form.getByLabel('timezone').fill('Asia/Tokyo');
    await form.getByRole('button', { name: 'Run' }).click();
    const result = form.getByTestId('result');
    await result.locator('[data-outcome="ok"]').waitFor();
    expect(await result.locator('.result-text').textContent()).toContain('Asia/Tokyo');
  }, 120_000);

  it('asks before running a capability that requires confirmation, and runs it only when confirmed', async () => {
    expect((await core.api('POST', '/api/plugins/register', plugin('garage', true))).status).toBe(201);
    const page = await openPage();
    await signIn(page, core.adminToken);
    await page.goto(`${core.httpUrl}/#/plugins/garage`);
    const form = page.locator('form[data-capability="open"]');
    await form.getByLabel('minutes').fill('10');
    await form.getByRole('button', { name: 'Review and run' }).click();
    const confirm = form.getByTestId('confirm');
    await confirm.waitFor();
    expect(await confirm.textContent()).toContain('minutes10');
    // Nothing was sent yet.
    expect((await core.api<{ count: number }>('GET', '/api/audit?plugin=garage')).body.count).toBe(0);
    await confirm.getByRole('button', { name: 'Confirm and run' }).click();
    await form.getByTestId('result').locator('[data-outcome="ok"]').waitFor();
    expect(await form.locator('.result-text').textContent()).toBe('open done');
    const audit = await core.api<{ entries: { outcome: string }[] }>('GET', '/api/audit?plugin=garage');
    expect(audit.body.entries.map((e) => e.outcome)).toEqual(['ok']);
  }, 120_000);
});

describe('chat, search and recent invocations', () => {
  it('orders milk as the signed-in user: a question, then "yes", then the order', async () => {
    const page = await openPage();
    await signIn(page, aliceToken);
    await page.getByLabel('Message').fill('buy me some milk');
    await page.getByLabel('Message').press('Enter');
    const question = page.locator('.message[data-kind="question"]');
    await question.waitFor();
    expect(await question.textContent()).toContain('"12 Oak St"');
    expect(listOrders(join(core.dataDir, 'plugins', 'buy'))).toHaveLength(0);
    await page.getByRole('button', { name: 'Yes' }).click();
    const answer = page.locator('.message[data-kind="answer"]', { hasText: 'Order placed for milk' });
    await answer.waitFor();
    expect(await answer.textContent()).toContain('delivery to 12 Oak St for Alice (phone 555-0100)');
    expect(listOrders(join(core.dataDir, 'plugins', 'buy'))).toEqual([expect.objectContaining({ item: 'milk', user_id: 'alice', channel: 'dashboard' })]);
  }, 120_000);

  it('shows retrieval scores as the API gives them', async () => {
    const api = await core.api<{ hits: { plugin_id: string; score: number }[] }>('GET', '/api/plugins/search?q=buy%20me%20some%20milk&k=5');
    const page = await openPage();
    await signIn(page, aliceToken);
    await page.getByRole('link', { name: 'Search' }).click();
    await page.getByLabel('Search plugins').fill('buy me some milk');
    await page.getByRole('button', { name: 'Search' }).click();
    const hits = page.getByTestId('search-results').locator('li.hit');
    await hits.first().waitFor();
    expect(await hits.first().getAttribute('data-plugin')).toBe('buy');
    expect(await hits.evaluateAll((items) => items.map((item) => item.getAttribute('data-plugin')))).toEqual(api.body.hits.map((h) => h.plugin_id));
    expect(await hits.first().getByTestId('score').textContent()).toBe(api.body.hits[0]!.score.toFixed(3));
  }, 120_000);

  it('lists recent invocations from the audit log and adds new ones live', async () => {
    const page = await openPage();
    await signIn(page, core.adminToken);
    await page.getByRole('link', { name: 'Invocations' }).click();
    const order = page.locator('tr[data-entry]', { hasText: 'place_order' });
    await order.waitFor();
    expect((await order.locator('td').allTextContents()).slice(1)).toEqual([
      'alice',
      'dashboard',
      'buy',
      'place_order',
      'ok',
      expect.stringMatching(/^\d+ ms$/),
    ]);
    await page.locator('[data-feed="live"]').waitFor();
    expect((await core.api('POST', '/v1/plugins/time/tools/now/run', { timezone: 'UTC' })).status).toBe(200);
    await expect
      .poll(async () => (await page.locator('tr[data-entry]').first().locator('td').allTextContents()).slice(1, 5))
      .toEqual(['admin', 'http', 'time', 'now']);
  }, 120_000);
});

describe('Home Assistant ingress', () => {
  let proxy: IngressProxy;
  beforeAll(async () => {
    proxy = await startIngressProxy({
      target: core.httpUrl,
      sourceAddress: PROXY_ADDRESS,
      token: 'f2c1e0',
      user: { id: 'abc', name: 'pat', display_name: 'Pat Doe' },
    });
  });
  afterAll(async () => {
    await proxy?.close();
  });
  // Proxies a single test sets up for itself, closed after it.
  const extras: IngressProxy[] = [];
  const extraProxy = async (options: Omit<Parameters<typeof startIngressProxy>[0], 'target'>): Promise<IngressProxy> => {
    const started = await startIngressProxy({ target: core.httpUrl, ...options });
    extras.push(started);
    return started;
  };
  afterEach(async () => {
    for (const extra of extras.splice(0)) await extra.close();
  });

  it('works under the ingress path prefix, signed in by Home Assistant, without a token', async () => {
    const page = await openPage(proxy.entry);
    await page.locator('[data-feed="live"]').waitFor();
    expect(await page.locator('.signed-in').textContent()).toBe('Admin · Pat Doe');
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0);
    await page.locator('tr[data-plugin="time"]').waitFor();
    expect((await core.api('POST', '/api/plugins/register', plugin('fan'))).status).toBe(201);
    await page.locator('tr[data-plugin="fan"]').waitFor();
    await page.locator('a.plugin-name', { hasText: 'Test fan' }).click();
    expect(page.url()).toBe(`${proxy.entry}#/plugins/fan`);
    const form = page.locator('form[data-capability="open"]');
    await form.getByRole('button', { name: 'Run' }).click();
    await form.getByTestId('result').locator('[data-outcome="ok"]').waitFor();
  }, 120_000);

  it('opens through Home Assistant even when its first tries fail (a dropped request, then a 502)', async () => {
    const flaky = await extraProxy({
      sourceAddress: PROXY_ADDRESS,
      token: 'a71b09',
      user: { id: 'abc', name: 'pat', display_name: 'Pat Doe' },
      faults: { '/api/whoami': ['drop', 'bad-gateway'] },
    });
    const page = await openPage(flaky.entry);
    await page.locator('[data-feed="live"]').waitFor();
    expect(await page.locator('.signed-in').textContent()).toBe('Admin · Pat Doe');
    expect(flaky.requests.filter((path) => path === '/api/whoami')).toHaveLength(3);
  }, 120_000);

  it('says why when the Core does not trust the proxy, and offers the token form', async () => {
    const untrusted = await extraProxy({ sourceAddress: '127.0.0.3', token: 'c0ffee' });
    const page = await openPage(untrusted.entry);
    await page.getByLabel('Token').waitFor();
    expect(await page.locator('.notice').textContent()).toContain("The Core did not accept Home Assistant's session");
    expect(untrusted.requests.filter((path) => path === '/api/whoami')).toHaveLength(1);
  }, 120_000);
});
