// The Wyoming conversation agent on the real Core (shipped built-ins, BM25, no LLM), spoken to as Home
// Assistant does — a Python asyncio client in its own process, one connection per command, the
// conversation, satellite and device ids in the context — and by the raw test client.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listOrders } from '../../plugins/buy/index.js';
import { loadConfig } from '../../src/config/load.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { connectWyoming } from '../helpers/wyoming-client.js';
import { ensureBuilt, REPO_ROOT, SHIPPED_PLUGINS_DIR } from '../e2e/helpers.js';

const run = promisify(execFile);
const HA_CLIENT = join(REPO_ROOT, 'test', 'fixtures', 'channels', 'wyoming_ha_client.py');
const KITCHEN = 'assist_satellite.kitchen_voice';
const BOB_DEVICE = '4b1c0f8e2d9a47f6b3e5c7d9a1f20e3c';

let core: TestCore;

beforeAll(async () => {
  await ensureBuilt();
  core = await startTestCore({
    pluginsDir: SHIPPED_PLUGINS_DIR,
    overrides: { wyoming: { port: 0, users: { [KITCHEN]: 'alice', [BOB_DEVICE]: 'bob' } } },
  });
  for (const [user, values] of Object.entries({
    alice: { name: 'Alice', address: '1 Alice Way', phone: '555-0101' },
    bob: { name: 'Bob', address: '2 Bob Road', phone: '555-0202' },
    household: { name: 'The Household', address: '3 House Lane', phone: '555-0303' },
  })) {
    expect((await core.api('POST', `/api/profiles/${user}`, { set: values })).status).toBe(200);
  }
}, 120_000);

afterAll(async () => {
  await core?.cleanup();
});

interface HaEvent {
  type: string;
  data: { text?: string; context?: Record<string, unknown>; handle?: Record<string, unknown>[] };
}

async function ha(...args: string[]): Promise<HaEvent> {
  const { stdout } = await run('/usr/bin/python3', [HA_CLIENT, '--port', String(core.wyomingPort), ...args], { timeout: 15_000 });
  return JSON.parse(stdout) as HaEvent;
}

function say(text: string, context: Record<string, unknown>): Promise<HaEvent> {
  return ha('transcript', '--text', text, '--context', JSON.stringify(context));
}

const ordersOf = (user: string) => listOrders(join(core.dataDir, 'plugins', 'buy')).filter((o) => o.user_id === user);

describe('Wyoming conversation agent on the Core', () => {
  it('listens only when configured, on the port from HOMECLAW_WYOMING_PORT or wyoming.port', () => {
    expect(core.wyomingPort).toBeGreaterThan(0);
    const defaults = loadConfig({ env: {} });
    expect(defaults.ok && defaults.config.wyoming).toMatchObject({ port: null, host: '127.0.0.1', user_id: 'household', users: {} });
    const fromEnv = loadConfig({ env: { HOMECLAW_WYOMING_PORT: '10300', HOMECLAW_WYOMING_HOST: '0.0.0.0' } });
    expect(fromEnv.ok && fromEnv.config.wyoming).toMatchObject({ port: 10300, host: '0.0.0.0' });
    const bad = loadConfig({ env: { HOMECLAW_WYOMING_PORT: 'ten' } });
    expect(bad.ok).toBe(false);
    const badUsers = loadConfig({ env: {}, overrides: { wyoming: { users: { [KITCHEN]: '' } } } });
    expect(badUsers.ok).toBe(false);
  });

  it('a Core without wyoming.port has no Wyoming listener, and a bad allow_from is refused at start', async () => {
    const plain = await startTestCore();
    try {
      expect(plain.wyomingPort).toBeNull();
    } finally {
      await plain.cleanup();
    }
    await expect(startTestCore({ overrides: { wyoming: { port: 0, allow_from: ['kitchen.local'] } } })).rejects.toThrow(
      /wyoming.allow_from: "kitchen.local" is not an IP address/,
    );
  });

  it("Home Assistant's describe gets info within its one-second timeout: one installed handle program", async () => {
    const info = await ha('describe');
    expect(info.type).toBe('info');
    expect(info.data.handle).toEqual([
      expect.objectContaining({
        name: 'HomeClaw',
        installed: true,
        supports_home_control: false,
        models: [expect.objectContaining({ name: 'homeclaw', installed: true, languages: ['en'] })],
      }),
    ]);
  });

  it('"buy me some milk" → the question with the profile values → "yes" in the same conversation places the order', async () => {
    const context = { conversation_id: '01JZWYOMINGBUYMILK0000000A', satellite_id: KITCHEN, device_id: 'kitchen-device' };
    const question = await say('buy me some milk', context);
    expect(question.type).toBe('handled');
    expect(question.data.text).toContain('"1 Alice Way"');
    expect(question.data.text).toContain('Is that correct?');
    expect(question.data.context).toEqual(context);
    expect(ordersOf('alice')).toHaveLength(0);

    const done = await say('yes', context);
    expect(done.type).toBe('handled');
    expect(done.data.text).toMatch(/^Order placed for milk: delivery to 1 Alice Way for Alice \(phone 555-0101\)\. Order id [0-9a-f-]{36}\.$/);
    expect(ordersOf('alice')).toHaveLength(1);
    expect(ordersOf('alice')[0]).toMatchObject({ item: 'milk', address: '1 Alice Way', channel: 'wyoming' });
  });

  it('a "yes" in another conversation does not confirm the pending call', async () => {
    const first = { conversation_id: '01JZWYOMINGBREAD000000000A', satellite_id: KITCHEN };
    const other = { conversation_id: '01JZWYOMINGOTHER000000000B', satellite_id: KITCHEN };
    const before = ordersOf('alice').length;
    expect((await say('buy me some bread', first)).data.text).toContain('Is that correct?');
    await say('yes', other);
    expect(ordersOf('alice')).toHaveLength(before);
    const done = await say('yes', first);
    expect(done.data.text).toMatch(/^Order placed for bread/);
    expect(ordersOf('alice')).toHaveLength(before + 1);
  });

  it("the device map picks the user: bob's device, and the household for an unmapped satellite", async () => {
    const bob = await say('buy me some bread', {
      conversation_id: '01JZWYOMINGBOB00000000000C',
      satellite_id: 'assist_satellite.office',
      device_id: BOB_DEVICE,
    });
    expect(bob.data.text).toContain('"2 Bob Road"');
    const household = await say('buy me some milk', { conversation_id: '01JZWYOMINGHOUSE000000000D', satellite_id: 'assist_satellite.garage' });
    expect(household.data.text).toContain('"3 House Lane"');
    expect((await say('yes', { conversation_id: '01JZWYOMINGHOUSE000000000D', satellite_id: 'assist_satellite.garage' })).data.text).toMatch(
      /^Order placed for milk: delivery to 3 House Lane/,
    );
    expect(ordersOf('household')).toHaveLength(1);
    expect(ordersOf('bob')).toHaveLength(0);
  });

  it('inline data works too; an over-long command is not-handled with the reason', async () => {
    const client = await connectWyoming(core.wyomingPort!);
    try {
      client.send('transcript', { text: '/time now timezone=Asia/Tokyo', context: { conversation_id: 'inline-1' } }, 'inline');
      const reply = await client.next();
      expect(reply.type).toBe('handled');
      expect(reply.data.text).toMatch(/in Asia\/Tokyo \(UTC\+09:00\)\.$/);
      client.send('transcript', { text: 'x'.repeat(20_000), context: { conversation_id: 'inline-1' } });
      const refused = await client.next();
      expect(refused.type).toBe('not-handled');
      expect(refused.data.text).toMatch(/too long \(20000 bytes; the limit is 16384 bytes\)/);
    } finally {
      client.close();
    }
  });
});
