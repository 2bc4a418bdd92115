// Where a message for a user goes, and when it is refused: the last channel (if anyone listens there),
// the default channel, the reminder's own channel, or nowhere with the reason; a plugin the user may
// not reach is refused.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { SqliteLastChannelStore } from '../../src/channels/last-channel-store.js';
import { NotificationBudget } from '../../src/channels/notification-budget.js';
import { createNotifier, type NotifierDeps } from '../../src/channels/notifier.js';
import { silentLogger } from '../../src/log.js';
import type { ChannelMessageOut } from '../../src/protocol/types.js';

function setup(options: Partial<NotifierDeps> & { listened?: Set<string> } = {}) {
  const published: { topic: string; message: ChannelMessageOut }[] = [];
  const lastChannels = new SqliteLastChannelStore(new Database(':memory:'));
  const listened = options.listened;
  const notifier = createNotifier({
    bus: {
      async publish(topic, payload) {
        published.push({ topic, message: JSON.parse(String(payload)) as ChannelMessageOut });
      },
      ...(listened ? { hasSubscribers: (topic: string) => listened.has(topic) } : {}),
    },
    lastChannels,
    default_channel: options.default_channel ?? null,
    log: silentLogger(),
    ...(options.mayNotify ? { mayNotify: options.mayNotify } : {}),
    ...(options.budget ? { budget: options.budget } : {}),
  });
  return { notifier, lastChannels, published };
}

describe('notifier', () => {
  it('delivers on the last channel with its session, as a notification with a fresh request id', async () => {
    const { notifier, lastChannels, published } = setup();
    lastChannels.remember('alice', 'phone', 's1');
    lastChannels.remember('alice', 'kitchen', 's2');
    const outcome = await notifier.notify({ user_id: 'alice', text: 'Hi', plugin_id: 'doorbell' });
    expect(outcome).toMatchObject({ ok: true, channel: 'kitchen' });
    expect(published).toEqual([
      {
        topic: 'homeclaw/channels/kitchen/out',
        message: { request_id: expect.any(String), user_id: 'alice', session_id: 's2', text: 'Hi', kind: 'notification', plugin_id: 'doorbell' },
      },
    ]);
  });

  it('skips a last channel nobody listens to for the default channel', async () => {
    const { notifier, lastChannels } = setup({ default_channel: 'board', listened: new Set(['homeclaw/channels/board/out']) });
    lastChannels.remember('alice', 'wyoming', 'conv-1');
    expect(await notifier.notify({ user_id: 'alice', text: 'x' })).toMatchObject({ ok: true, channel: 'board' });
  });

  it('without any channel: the fallback channel, else no_channel with the reason', async () => {
    const { notifier } = setup();
    expect(await notifier.notify({ user_id: 'zoe', text: 'x', fallback_channel: 'phone' })).toMatchObject({ ok: true, channel: 'phone' });
    expect(await notifier.notify({ user_id: 'zoe', text: 'x' })).toEqual({
      ok: false,
      error_code: 'no_channel',
      error: 'user "zoe" has no last channel and notifications.default_channel is not set',
    });
  });

  it('refuses a plugin the user may not reach, and an empty text', async () => {
    const { notifier, lastChannels, published } = setup({ mayNotify: (user, plugin) => !(user === 'kid' && plugin === 'buy') });
    lastChannels.remember('kid', 'tablet', 's');
    expect(await notifier.notify({ user_id: 'kid', text: 'Order shipped', plugin_id: 'buy' })).toMatchObject({ ok: false, error_code: 'forbidden' });
    expect(await notifier.notify({ user_id: 'kid', text: '  ' })).toMatchObject({ ok: false, error_code: 'invalid' });
    expect(await notifier.notify({ user_id: 'kid', text: 'Bedtime', plugin_id: 'reminders' })).toMatchObject({ ok: true });
    expect(published.map((p) => p.message.text)).toEqual(['Bedtime']);
  });

  it("refuses a plugin's own messages past its budget for that user, with the reason; a scheduled task's are not counted", async () => {
    const { notifier, lastChannels, published } = setup({ budget: new NotificationBudget(2) });
    lastChannels.remember('alice', 'phone', 's');
    const own = { user_id: 'alice', text: 'Motion in the garden', plugin_id: 'camera', budgeted: true };
    expect(await notifier.notify(own)).toMatchObject({ ok: true });
    expect(await notifier.notify(own)).toMatchObject({ ok: true });
    expect(await notifier.notify(own)).toEqual({
      ok: false,
      error_code: 'rate_limited',
      error: 'plugin "camera" sent user "alice" more than 2 messages in the last minute (notifications.max_per_minute); this one was not delivered',
    });
    expect(await notifier.notify({ user_id: 'alice', text: 'Daily report', plugin_id: 'camera' })).toMatchObject({ ok: true });
    expect(published.map((p) => p.message.text)).toEqual(['Motion in the garden', 'Motion in the garden', 'Daily report']);
  });
});
