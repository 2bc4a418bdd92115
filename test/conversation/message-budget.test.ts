// A user (a stolen token, or an automation stuck in a loop) sending message after message: each can cost
// a model call and a plugin call, and nothing bounded them. conversation.max_messages_per_minute is a
// token bucket per user over every channel: over it the reply is an error with error_code rate_limited
// and when to try again; the model is not called.
import { afterEach, describe, expect, it } from 'vitest';
import { ok, timeDescriptor } from '../fixtures/conversation/fakes.js';
import { startHarness, type Harness } from '../fixtures/conversation/harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function start(perMinute: number): Promise<Harness> {
  harness = await startHarness({ plugins: [timeDescriptor], withLlm: true, settings: { max_messages_per_minute: perMinute } });
  return harness;
}

describe('messages per user per minute', () => {
  it('refuses the message over the budget with rate_limited and retry_after_sec; the model is not called; others are unaffected', async () => {
    const h = await start(3);
    h.dispatcher.on('time', () => ok('It is 10:00.'));
    h.llm!.respondWith(() => ({ text: 'Hello.' }));
    const al = await h.user('al');
    for (let i = 0; i < 3; i++) expect(await al.say(`hello ${i}`)).toMatchObject({ kind: 'answer', text: 'Hello.' });
    expect(h.llm!.requests).toHaveLength(3);

    const refused = await al.say('hello again');
    expect(refused).toMatchObject({ kind: 'error', error_code: 'rate_limited', retry_after_sec: 20, user_id: 'al' });
    expect(refused.text).toMatch(/faster than 3 a minute; please wait 20 s/);
    expect(h.llm!.requests).toHaveLength(3);
    // A slash command counts too (it calls a plugin).
    expect(await al.say('/time now')).toMatchObject({ error_code: 'rate_limited' });
    expect(h.dispatcher.calls).toHaveLength(0);
    expect(h.engine.retryAfterSec?.('al')).toBe(20);

    const bo = await h.user('bo', 'whatsapp');
    expect(await bo.say('hello')).toMatchObject({ kind: 'answer' });
    expect(h.engine.retryAfterSec?.('bo')).toBe(0);

    // Twenty seconds later one more message is taken.
    h.clock.ms += 20_000;
    expect(h.engine.retryAfterSec?.('al')).toBe(0);
    expect(await al.say('hello later')).toMatchObject({ kind: 'answer' });
    expect(await al.say('and again')).toMatchObject({ error_code: 'rate_limited' });
  });

  it('counts a user over every channel together, and does not count empty or oversized messages', async () => {
    const h = await start(2);
    h.llm!.respondWith(() => ({ text: 'Hi.' }));
    const onTelegram = await h.user('cy', 'telegram');
    const onWeb = await h.user('cy', 'web');
    expect(await onTelegram.say('   ')).toMatchObject({ kind: 'error' });
    expect(await onTelegram.say('x'.repeat(20_000))).toMatchObject({ kind: 'error' });
    expect(await onTelegram.say('one')).toMatchObject({ kind: 'answer' });
    expect(await onWeb.say('two')).toMatchObject({ kind: 'answer' });
    expect(await onWeb.say('three')).toMatchObject({ kind: 'error', error_code: 'rate_limited', retry_after_sec: 30 });
  });
});
