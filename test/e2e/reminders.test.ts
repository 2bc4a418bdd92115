// The built-in reminders plugin on the real Core, as a user talks to it: without an LLM ("remind me in 2
// seconds to call mom", "every Monday at 8 remind me to take out the bins", list, cancel, a slash
// command) and with the scripted model; reminders fire once on the user's channel, survive a restart,
// are delivered late or marked missed after downtime, and never fire twice.
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReminderStore } from '../../plugins/reminders/store.js';
import { topics } from '../../src/protocol/topics.js';
import type { ChannelMessageOut } from '../../src/protocol/types.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { connectTestClient, type TestClient } from '../helpers/mqtt-client.js';
import { freePort } from '../helpers/ports.js';
import { startScriptedLlm, type ChatRequestBody, type ScriptedLlm } from '../helpers/scripted-llm.js';
import { channelUser, ensureBuilt, makePluginsDir } from './helpers.js';

const ZONE = 'Asia/Tokyo';
const CHANNEL = 'phone';
const config = (startupDelaySec: number): string => `late_grace_hours: 12\nstartup_delay_sec: ${startupDelaySec}\n`;

function notifications(client: TestClient, user = 'alice'): ChannelMessageOut[] {
  return client.received
    .filter((m) => m.topic === topics.channelOut(CHANNEL))
    .map((m) => m.json<ChannelMessageOut>())
    .filter((m) => m.kind === 'notification' && m.user_id === user);
}

async function waitForNotification(client: TestClient, includes: string, timeoutMs = 15_000): Promise<ChannelMessageOut> {
  const message = await client.waitFor(
    topics.channelOut(CHANNEL),
    (m) => {
      const out = m.json<ChannelMessageOut>();
      return out.kind === 'notification' && out.text.includes(includes);
    },
    timeoutMs,
  );
  return message.json<ChannelMessageOut>();
}

describe('reminders without an LLM', () => {
  let core: TestCore;
  let client: TestClient;
  let pluginsDir: string;
  let port: number;
  const say = (text: string): Promise<ChannelMessageOut> => channelUser(client, CHANNEL, 'alice', 'kitchen').say(text);

  async function start(dataDir?: string): Promise<void> {
    core = await startTestCore({ pluginsDir, ...(dataDir ? { dataDir } : {}), overrides: { broker: { port }, scheduler: { timezone: ZONE } } });
    client = await connectTestClient(core.mqttUrl, { clientId: `alice-${randomUUID()}` });
    await client.subscribe(topics.channelOut(CHANNEL));
  }

  beforeAll(async () => {
    await ensureBuilt();
    port = await freePort();
    pluginsDir = makePluginsDir({ shipped: [{ id: 'reminders', config: config(1) }, { id: 'notes' }, { id: 'time' }] });
    await start();
  }, 120_000);

  afterAll(async () => {
    await client?.end();
    await core?.cleanup();
  });

  it('"remind me in 2 seconds to call mom" is set, then delivered once on the channel the user spoke on', async () => {
    const reply = await say('Remind me in 2 seconds to call mom');
    expect(reply).toMatchObject({ kind: 'answer', plugin_id: 'reminders', capability_id: 'add' });
    expect(reply.text).toMatch(/^OK, I will remind you on .+: call mom \(reminder #\d+\)\.$/);
    const fired = await waitForNotification(client, 'call mom');
    expect(fired).toMatchObject({ text: 'Reminder: call mom', user_id: 'alice', session_id: 'kitchen', plugin_id: 'reminders' });
    expect(fired.request_id).not.toBe(reply.request_id);
    expect(await client.quiet(topics.channelOut(CHANNEL), 2500, (m) => m.json<ChannelMessageOut>().text.includes('call mom'))).toBe(true);
  });

  it('"every Monday at 8 remind me to take out the bins", then list and cancel it in words', async () => {
    const set = await say('Every Monday at 8 remind me to take out the bins');
    expect(set).toMatchObject({ kind: 'answer', capability_id: 'add' });
    expect(set.text).toMatch(/every Monday at 08:00 \(next: Mon \d+ \w+ 08:00\): take out the bins/);
    const list = await say('What reminders do I have?');
    expect(list).toMatchObject({ kind: 'answer', capability_id: 'list' });
    expect(list.text).toMatch(/#\d+ every Monday at 08:00 .*: take out the bins/);
    const cancelled = await say('Cancel the reminder about the bins');
    expect(cancelled).toMatchObject({ kind: 'answer', capability_id: 'cancel' });
    expect(cancelled.text).toMatch(/^Cancelled: #\d+ take out the bins\.$/);
    expect((await say('What reminders do I have?')).text).toBe('You have no reminders.');
  });

  it('a slash command with text and when works the same', async () => {
    const reply = await say('/reminders add text="water the plants" when="in 2 seconds"');
    expect(reply.text).toContain(': water the plants (reminder #');
    expect((await waitForNotification(client, 'water the plants')).text).toBe('Reminder: water the plants');
  });

  it('a reminder that cannot be read gets a clear answer and nothing is stored', async () => {
    const noTime = await say('/reminders add text="call the plumber"');
    expect(noTime.kind).toBe('error');
    expect(noTime.text).toContain('When should I remind you?');
    const noText = await say('Remind me in 10 minutes');
    expect(noText).toMatchObject({ kind: 'error', capability_id: 'add' });
    expect(noText.text).toContain('What should I remind you of?');
    expect((await say('What reminders do I have?')).text).toBe('You have no reminders.');
  });

  it('survives a restart: due meanwhile → delivered (late ones say so), long overdue → missed, never twice', async () => {
    const pending = await say('Remind me in 3 seconds to feed the cat');
    expect(pending.kind).toBe('answer');
    const dataDir = core.dataDir;
    await client.end();
    await core.cleanup({ keepData: true });
    // While the Core is down: a reminder 10 minutes overdue, one 3 days overdue, a weekly one 3 days overdue.
    const store = new ReminderStore(join(dataDir, 'plugins', 'reminders'));
    const now = Date.now();
    store.add({
      user_id: 'alice',
      channel: CHANNEL,
      text: 'take the cake out',
      schedule: { kind: 'once', at: now - 600_000 },
      timezone: ZONE,
      next_at: now - 600_000,
      now,
    });
    store.add({
      user_id: 'alice',
      channel: CHANNEL,
      text: 'renew the passport',
      schedule: { kind: 'once', at: now - 3 * 86_400_000 },
      timezone: ZONE,
      next_at: now - 3 * 86_400_000,
      now,
    });
    const weekly = store.add({
      user_id: 'alice',
      channel: CHANNEL,
      text: 'weekly review',
      schedule: { kind: 'cron', pattern: '0 0 8 * * 1', description: 'every Monday at 08:00' },
      timezone: ZONE,
      next_at: now - 3 * 86_400_000,
      now,
    });
    store.close();
    await new Promise((r) => setTimeout(r, 3500));
    writeFileSync(join(pluginsDir, 'reminders', 'config.yml'), config(4));
    await start(dataDir);

    const cat = await waitForNotification(client, 'feed the cat');
    expect(cat).toMatchObject({ text: 'Reminder: feed the cat', user_id: 'alice', session_id: 'kitchen' });
    expect((await waitForNotification(client, 'take the cake out')).text).toMatch(/^Reminder \(was due \w+ \d+ \w+ \d\d:\d\d\): take the cake out$/);
    const list = await say('What reminders do I have?');
    expect(list.text).toMatch(/#\d+ missed while HomeClaw was down: renew the passport/);
    expect(list.text).toMatch(/every Monday at 08:00 \(next: Mon .*\): weekly review/);
    const stored = new ReminderStore(join(core.dataDir, 'plugins', 'reminders'));
    expect(stored.get(weekly.id)?.next_at).toBeGreaterThan(Date.now());
    expect(stored.get(weekly.id)?.fired_count).toBe(0);
    stored.close();
    expect(
      notifications(client)
        .map((n) => n.text)
        .filter((t) => /passport|weekly review/.test(t)),
    ).toEqual([]);

    // Another restart delivers none of them again.
    await client.end();
    await core.cleanup({ keepData: true });
    writeFileSync(join(pluginsDir, 'reminders', 'config.yml'), config(1));
    await start(dataDir);
    expect(await client.quiet(topics.channelOut(CHANNEL), 3500, (m) => m.json<ChannelMessageOut>().kind === 'notification')).toBe(true);
  }, 60_000);
});

describe('reminders with the scripted LLM', () => {
  let core: TestCore;
  let client: TestClient;
  let llm: ScriptedLlm;

  const lastUser = (request: ChatRequestBody): string => {
    const users = request.messages.filter((m) => m.role === 'user');
    return String(users[users.length - 1]?.content ?? '');
  };

  beforeAll(async () => {
    await ensureBuilt();
    llm = await startScriptedLlm({
      respond: (request) => {
        const text = lastUser(request).toLowerCase();
        const last = request.messages[request.messages.length - 1]!;
        if (last.role === 'tool') return { text: `tool said: ${String(last.content)}` };
        const route = (capability_id: string, parameters: Record<string, unknown>) => ({
          tool_calls: [{ name: 'route_to_plugin', arguments: { plugin_id: 'reminders', capability_id, parameters } }],
        });
        if (text.includes('7 pm')) return route('add', { text: 'call mom', when: 'at 7 pm' });
        if (text.includes('bins')) return route('add', { text: 'take out the bins', when: 'every Monday at 8' });
        if (text.includes('which reminders')) return route('list', {});
        return { text: 'I did not understand.' };
      },
    });
    const pluginsDir = makePluginsDir({ shipped: [{ id: 'reminders', config: config(1) }] });
    core = await startTestCore({ pluginsDir, overrides: { llm: { base_url: llm.url, model: 'scripted' }, scheduler: { timezone: ZONE } } });
    client = await connectTestClient(core.mqttUrl);
    await client.subscribe(topics.channelOut(CHANNEL));
  }, 120_000);

  afterAll(async () => {
    await client?.end();
    await core?.cleanup();
    await llm?.close();
  });

  it('takes the parameters the model gives, in the household time zone', async () => {
    const bob = channelUser(client, CHANNEL, 'bob');
    const reply = await bob.say('remind me at 7 pm to call mom');
    expect(reply).toMatchObject({ kind: 'answer', plugin_id: 'reminders' });
    expect(reply.text).toMatch(/^OK, I will remind you on \w+ \d+ \w+ 19:00: call mom \(reminder #1\)\.$/);
    const store = new ReminderStore(join(core.dataDir, 'plugins', 'reminders'));
    const stored = store.get(1)!;
    store.close();
    // 19:00 in Tokyo is 10:00 UTC: the next one after now.
    const now = Date.now();
    const today = new Date(now);
    let expected = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate(), 10, 0, 0);
    while (expected <= now) expected += 86_400_000;
    while (expected - 86_400_000 > now) expected -= 86_400_000;
    expect(stored).toMatchObject({ user_id: 'bob', channel: CHANNEL, text: 'call mom', timezone: ZONE, next_at: expected });

    const weekly = await bob.say('every Monday at 8 remind me to take out the bins');
    expect(weekly.text).toMatch(/every Monday at 08:00 \(next: Mon .* 08:00\): take out the bins/);
    const list = await bob.say('which reminders are set?');
    expect(list.text).toContain('call mom');
    expect(list.text).toContain('take out the bins');
    // Another user sees none of bob's reminders.
    expect((await channelUser(client, CHANNEL, 'carol').say('which reminders are set?')).text).toBe('You have no reminders.');
  });
});
