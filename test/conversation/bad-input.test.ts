// Bad input on the channel topics and the engine: a clear reply to the sender (or a log line when no
// reply topic exists), nothing invoked, the Core keeps running.
import { afterEach, describe, expect, it } from 'vitest';
import { topics } from '../../src/protocol/topics.js';
import { connectUser } from '../fixtures/conversation/aedes-bus.js';
import { ok, timeDescriptor } from '../fixtures/conversation/fakes.js';
import { startHarness, type Harness } from '../fixtures/conversation/harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function start(): Promise<Harness> {
  harness = await startHarness({ plugins: [timeDescriptor], withLlm: false });
  harness.dispatcher.on('time', () => ok('It is 10:00.'));
  return harness;
}

describe('bad input on the channel topics', () => {
  it('empty and whitespace-only text → a clear error reply', async () => {
    const h = await start();
    const user = await h.user('al');
    const reply = await user.say('   ');
    expect(reply).toMatchObject({ kind: 'error', user_id: 'al' });
    expect(reply.text).toMatch(/empty/);
  });

  it('1 MB of text → "too long" with the limit; nothing invoked', async () => {
    const h = await start();
    const user = await h.user('bo');
    const reply = await user.say('what time is it '.repeat(65_536));
    expect(reply.kind).toBe('error');
    expect(reply.text).toMatch(/too long \(1048576 bytes; the limit is 16384 bytes\)/);
    expect(h.dispatcher.calls).toHaveLength(0);
  });

  it('invalid JSON and schema-invalid messages → an error reply on the out topic, echoing request_id when usable', async () => {
    const h = await start();
    const user = await h.user('cy');
    await user.publishRaw(topics.channelIn('telegram'), '{"user_id": "cy", "text": ');
    const invalidJson = await user.waitFor(() => true);
    expect(invalidJson.kind).toBe('error');
    expect(invalidJson.text).toMatch(/^Invalid message/);
    await user.publishRaw(topics.channelIn('telegram'), JSON.stringify({ request_id: 'r-1', user_id: 'cy', text: 42 }));
    const invalid = await user.waitFor((r) => r.request_id === 'r-1');
    expect(invalid).toMatchObject({ kind: 'error', user_id: 'cy' });
    expect(invalid.text).toMatch(/text/);
    // Still alive:
    expect(await user.say('what time is it?')).toMatchObject({ kind: 'answer', text: 'It is 10:00.' });
  });

  it('an invalid channel name is dropped (no reply anywhere); a valid unknown channel works', async () => {
    const h = await start();
    const watcher = await connectUser(h.broker.url, topics.channelIn('x'), topics.channelOut('x'), 'watch');
    const everyReply: string[] = [];
    await watcher.client.subscribeAsync(topics.channelOut('+'), { qos: 1 });
    watcher.client.on('message', (topic) => everyReply.push(topic));
    await watcher.publishRaw(topics.channelIn('Bad Name'), JSON.stringify({ user_id: 'u', text: 'what time is it?' }));
    const fresh = await h.user('dee', 'brand-new-channel');
    expect(await fresh.say('what time is it?')).toMatchObject({ kind: 'answer' });
    await new Promise((r) => setTimeout(r, 100));
    expect(everyReply).toEqual([topics.channelOut('brand-new-channel')]);
    expect(h.dispatcher.calls).toHaveLength(1);
    await watcher.close();
  });
});

describe('engine input checks', () => {
  it('a message without a request_id gets one; session ids are echoed', async () => {
    const h = await start();
    const reply = await h.engine.handleMessage({ channel: 'http', user_id: 'ed', text: 'what time is it?', session_id: 's1' });
    expect(reply.request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(reply).toMatchObject({ session_id: 's1', kind: 'answer' });
  });

  it('retrieval failing never throws out of handleMessage', async () => {
    const h = await start();
    h.retrieval.failNext = true;
    const reply = await h.engine.handleMessage({ channel: 'http', user_id: 'fa', text: 'what time is it?' });
    expect(reply.kind).toBe('answer');
    expect(reply.text).toMatch(/No plugin matches/);
  });
});
