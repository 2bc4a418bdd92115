// Pushing to a user on the real Core: an SDK plugin in another process calls notify() and the user's last
// channel (remembered per user, kept across a restart) gets a message of kind "notification"; other
// clients cannot speak for the plugin, a plugin the user's policy keeps them from may not message them,
// retained and malformed messages are refused with the reason; a
// user with no channel goes to notifications.default_channel; a plugin's config.yml `tasks` run on their
// schedule and their results reach the configured user.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/protocol/topics.js';
import type { ChannelMessageOut, PluginNotifyAck } from '../../src/protocol/types.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { connectTestClient, type TestClient } from '../helpers/mqtt-client.js';
import { freePort } from '../helpers/ports.js';
import { REPO_ROOT, channelUser, ensureBuilt, makePluginsDir } from './helpers.js';

const NOTIFY_PLUGIN = join(REPO_ROOT, 'test', 'fixtures', 'sdk', 'notify-plugin.mjs');

interface PluginProcess {
  child: ChildProcessWithoutNullStreams;
  next(): Promise<Record<string, unknown>>;
  notify(userId: string, text: string): Promise<Record<string, unknown>>;
}

function startNotifyPlugin(url: string, id: string): PluginProcess {
  const child = spawn(process.execPath, [NOTIFY_PLUGIN, url, id], { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: Record<string, unknown>[] = [];
  const waiters: ((line: Record<string, unknown>) => void)[] = [];
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  createInterface({ input: child.stdout }).on('line', (line) => {
    const parsed = JSON.parse(line) as Record<string, unknown>;
    const waiter = waiters.shift();
    if (waiter) waiter(parsed);
    else lines.push(parsed);
  });
  const next = (): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const ready = lines.shift();
      if (ready) return resolve(ready);
      const timer = setTimeout(() => reject(new Error(`no line from the plugin process; stderr: ${stderr}`)), 20_000);
      waiters.push((line) => {
        clearTimeout(timer);
        resolve(line);
      });
    });
  return {
    child,
    next,
    notify(userId, text) {
      child.stdin.write(`${JSON.stringify({ user_id: userId, text })}\n`);
      return next();
    },
  };
}

const TICKER = {
  id: 'ticker',
  manifest: 'id: ticker\nname: Ticker\ndescription: Counts.\ncapabilities:\n  - { id: tick, name: Tick, description: Count one up., parameters: [] }\n',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: JavaScript source text of a plugin module.
  module: 'let n = 0;\nexport function tick() { n += 1; return `tick ${n}`; }\n',
  config: 'tasks:\n  tick:\n    type: repeated\n    interval_unit: seconds\n    interval: 2\n',
};

let core: TestCore;
let alice: TestClient;
let board: TestClient;
let doorbell: PluginProcess;
let port: number;

async function startCore(dataDir?: string): Promise<void> {
  core = await startTestCore({
    pluginsDir: makePluginsDir({ builtins: [TICKER] }),
    ...(dataDir ? { dataDir } : {}),
    overrides: {
      broker: { port },
      notifications: { default_channel: 'board', max_per_minute: 5 },
      scheduler: { user_id: 'alice' },
      policy: { users: { kid: { deny: ['doorbell'] } }, require_confirmation: [] },
    },
  });
}

beforeAll(async () => {
  await ensureBuilt();
  port = await freePort();
  await startCore();
  alice = await connectTestClient(core.mqttUrl, { clientId: 'alice-phone' });
  await alice.subscribe(topics.channelOut('phone'));
  board = await connectTestClient(core.mqttUrl, { clientId: 'hall-board' });
  await board.subscribe(topics.channelOut('board'));
  doorbell = startNotifyPlugin(core.mqttUrl, 'doorbell');
  expect(await doorbell.next()).toMatchObject({ event: 'registered' });
}, 120_000);

afterAll(async () => {
  doorbell?.child.stdin.end();
  doorbell?.child.kill();
  await alice?.end();
  await board?.end();
  await core?.cleanup();
});

const notificationOn = (client: TestClient, channel: string, text: string) =>
  client.waitFor(topics.channelOut(channel), (m) => m.json<ChannelMessageOut>().kind === 'notification' && m.json<ChannelMessageOut>().text === text, 10_000);

describe('homeclaw/plugins/notify and the SDK notify()', () => {
  it("goes to the user's last channel and session, as kind notification", async () => {
    expect((await channelUser(alice, 'phone', 'alice', 'evening').say('/help')).kind).toBe('answer');
    const waiting = notificationOn(alice, 'phone', 'Someone is at the door.');
    expect(await doorbell.notify('alice', 'Someone is at the door.')).toEqual({ event: 'notified', channel: 'phone' });
    expect((await waiting).json<ChannelMessageOut>()).toMatchObject({ user_id: 'alice', session_id: 'evening', kind: 'notification', plugin_id: 'doorbell' });
  });

  it('a user who never spoke gets it on notifications.default_channel', async () => {
    const waiting = notificationOn(board, 'board', 'Parcel for Bob.');
    expect(await doorbell.notify('bob', 'Parcel for Bob.')).toEqual({ event: 'notified', channel: 'board' });
    expect((await waiting).json<ChannelMessageOut>()).toMatchObject({ user_id: 'bob' });
  });

  it('refuses a plugin that sends one user more than notifications.max_per_minute, and says so', async () => {
    const outcomes = [];
    for (let i = 0; i < 7; i++) outcomes.push(await doorbell.notify('carol', `Ring ${i}`));
    expect(outcomes.slice(0, 5)).toEqual(Array(5).fill({ event: 'notified', channel: 'board' }));
    expect(outcomes.slice(5)).toEqual(
      Array(2).fill({
        event: 'refused',
        name: 'PluginNotifyError',
        code: 'rate_limited',
        message: 'plugin "doorbell" sent user "carol" more than 5 messages in the last minute (notifications.max_per_minute); this one was not delivered',
      }),
    );
    // Another user has a budget of their own.
    expect(await doorbell.notify('dave', 'Ring for Dave')).toEqual({ event: 'notified', channel: 'board' });
  });

  it("refuses a plugin the user's policy does not let them reach, and says so", async () => {
    expect((await channelUser(alice, 'phone', 'kid').say('/help')).kind).toBe('answer');
    expect(await doorbell.notify('kid', 'Open the door!')).toMatchObject({
      event: 'refused',
      name: 'PluginNotifyError',
      code: 'forbidden',
      message: 'user "kid" may not reach plugin "doorbell"',
    });
    expect(await alice.quiet(topics.channelOut('phone'), 1000, (m) => m.json<ChannelMessageOut>().text === 'Open the door!')).toBe(true);
  });

  it('refuses what another client publishes for the plugin, retained messages and malformed ones', async () => {
    const intruder = await connectTestClient(core.mqttUrl, { clientId: `intruder-${randomUUID()}` });
    try {
      await intruder.subscribe(topics.notified('doorbell'));
      await intruder.publish(topics.notify('doorbell'), { user_id: 'alice', text: 'Fake doorbell!' });
      await intruder.publish(topics.notify('doorbell'), { user_id: 'alice', text: 'Retained doorbell!' }, { retain: true });
      expect(await alice.quiet(topics.channelOut('phone'), 1500, (m) => /Fake|Retained/.test(m.json<ChannelMessageOut>().text))).toBe(true);
      // A malformed message from the owner is answered with the reason on its notified topic.
      const owner = await connectTestClient(core.mqttUrl, { clientId: 'doorbell-tester' });
      await owner.subscribe(topics.notified('owned'));
      await owner.publish(topics.register(), {
        id: 'owned',
        name: 'Owned',
        description: 'Owned by the tester.',
        capabilities: [{ id: 'x', name: 'X', description: 'X.', parameters: [] }],
        epoch: 1,
      });
      await new Promise((r) => setTimeout(r, 300));
      await owner.publish(topics.notify('owned'), { user_id: 'alice', text: '', notify_id: 'n1', colour: 'red' });
      const ack = (await owner.waitFor(topics.notified('owned'))).json<PluginNotifyAck>();
      expect(ack).toMatchObject({ ok: false, error_code: 'invalid', notify_id: 'n1' });
      expect(ack.error).toContain('/text');
      expect(ack.error).toContain('/colour');
      await owner.end();
    } finally {
      await intruder.end();
    }
  });

  it('config.yml tasks run on schedule and their results reach the configured user', async () => {
    const first = await alice.waitFor(topics.channelOut('phone'), (m) => /^tick \d+$/.test(m.json<ChannelMessageOut>().text), 10_000);
    expect(first.json<ChannelMessageOut>()).toMatchObject({ user_id: 'alice', kind: 'notification', plugin_id: 'ticker' });
    const n = Number(first.json<ChannelMessageOut>().text.split(' ')[1]);
    await alice.waitFor(topics.channelOut('phone'), (m) => m.json<ChannelMessageOut>().text === `tick ${n + 1}`, 10_000);
    expect(core.ctx.scheduler?.list()).toEqual([{ plugin_id: 'ticker', task: 'tick', capability_id: 'tick', next_run: expect.any(String), user_id: 'alice' }]);
  });

  it("remembers the user's last channel across a restart", async () => {
    const dataDir = core.dataDir;
    doorbell.child.stdin.end();
    await new Promise((r) => doorbell.child.once('exit', r));
    await alice.end();
    await board.end();
    await core.cleanup({ keepData: true });
    await startCore(dataDir);
    alice = await connectTestClient(core.mqttUrl, { clientId: 'alice-phone-2' });
    await alice.subscribe(topics.channelOut('phone'));
    board = await connectTestClient(core.mqttUrl, { clientId: 'hall-board-2' });
    await board.subscribe(topics.channelOut('board'));
    const outcome = await core.ctx.notifier.notify({ user_id: 'alice', text: 'Still here.', plugin_id: 'ticker' });
    expect(outcome).toMatchObject({ ok: true, channel: 'phone' });
  }, 60_000);
});
