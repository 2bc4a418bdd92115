// `homeclaw send` / `homeclaw chat` against a real broker with the engine attached.
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { runChat, runSend, type ChatClientOptions } from '../../src/cli/chat.js';
import { buyDescriptor, ok, timeDescriptor } from '../fixtures/conversation/fakes.js';
import { startHarness, type Harness } from '../fixtures/conversation/harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function collect(stream: PassThrough): () => string {
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  return () => text;
}

async function waitUntil(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('homeclaw send / chat', () => {
  it('send prints the answer and exits 0; no Core → exit 2 after the timeout', async () => {
    harness = await startHarness({ plugins: [timeDescriptor], withLlm: false });
    harness.dispatcher.on('time', () => ok('It is 10:00.'));
    const options: ChatClientOptions = { url: harness.broker.url, channel: 'cli', user: 'zed', timeoutSec: 5 };
    const out = new PassThrough();
    const text = collect(out);
    expect(await runSend('what time is it?', options, out)).toBe(0);
    expect(text()).toBe('homeclaw> It is 10:00.\n');
    await harness.channels.stop();
    const out2 = new PassThrough();
    const text2 = collect(out2);
    expect(await runSend('hello?', { ...options, timeoutSec: 0.3 }, out2)).toBe(2);
    expect(text2()).toMatch(/No reply within 0.3 s/);
  });

  it('chat shows questions and answers for this user only, through the buy confirmation dialogue', async () => {
    harness = await startHarness({ plugins: [buyDescriptor(), timeDescriptor], withLlm: false });
    harness.dispatcher.on('buy', (o) => ok(`Order placed for ${String(o.parameters?.item)}.`));
    harness.profiles.set('zoe', { name: 'Zoe', address: '1 Elm St', phone: '555-0101' });
    const input = new PassThrough();
    const output = new PassThrough();
    const text = collect(output);
    const done = runChat({ url: harness.broker.url, channel: 'cli', user: 'zoe', timeoutSec: 5 }, { input, output });
    await waitUntil(() => text().includes('Connected'));
    // Another user's traffic on the same channel must not show up.
    const other = await harness.user('someone-else', 'cli');
    await other.say('/help');
    input.write('buy me some milk\n');
    await waitUntil(() => text().includes('homeclaw (question)>'));
    expect(text()).toContain('1 Elm St');
    input.write('yes\n');
    await waitUntil(() => text().includes('homeclaw> Order placed for milk.'));
    input.write('/quit\n');
    await done;
    expect(text()).not.toContain('Commands:');
  });
});
