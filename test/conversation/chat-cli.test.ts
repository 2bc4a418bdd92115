// `homeclaw send` / `homeclaw chat` against a real broker with the engine attached.
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { formatReply, runChat, runSend, type ChatClientOptions } from '../../src/cli/chat.js';
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
    const errors = new PassThrough();
    const diagnostics = collect(errors);
    const done = runChat({ url: harness.broker.url, channel: 'cli', user: 'zoe', timeoutSec: 5 }, { input, output, errors });
    // Not a terminal: the banner goes to the diagnostics stream, stdout carries only replies.
    await waitUntil(() => diagnostics().includes('Connected'));
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

  it('piped input: every line answered in order before the next is sent, no prompts, exit after the last answer', async () => {
    harness = await startHarness({ plugins: [buyDescriptor(), timeDescriptor], withLlm: false });
    harness.dispatcher.on('time', () => ok('It is 10:00.'));
    harness.dispatcher.on('buy', (o) => ok(`Order placed for ${String(o.parameters?.item)}.`));
    harness.profiles.set('pip', { name: 'Pip', address: '2 Elm St', phone: '555-0102' });
    const input = new PassThrough();
    const output = new PassThrough();
    const errors = new PassThrough();
    const text = collect(output);
    const diagnostics = collect(errors);
    // The whole script is in the pipe, and the pipe is closed, before the first answer exists.
    input.end('what time is it?\n\nbuy me some milk\nyes\n');
    const code = await runChat({ url: harness.broker.url, channel: 'cli', user: 'pip', timeoutSec: 5 }, { input, output, errors });
    expect(code).toBe(0);
    expect(text().split('\n')).toEqual([
      'homeclaw> It is 10:00.',
      expect.stringMatching(/^homeclaw \(question\)> .*"2 Elm St"/),
      'homeclaw> Order placed for milk.',
      '',
    ]);
    expect(text()).not.toContain('you>');
    expect(diagnostics()).toContain('Connected to');
    expect(harness.dispatcher.calls.filter((c) => c.plugin_id === 'buy')).toHaveLength(1);
  });

  it('--json prints one channel reply object per line', async () => {
    harness = await startHarness({ plugins: [timeDescriptor], withLlm: false });
    harness.dispatcher.on('time', () => ok('It is 10:00.'));
    const input = new PassThrough();
    const output = new PassThrough();
    const text = collect(output);
    input.end('/help\nwhat time is it?\n');
    const code = await runChat(
      { url: harness.broker.url, channel: 'cli', user: 'jay', timeoutSec: 5 },
      { input, output, errors: new PassThrough() },
      { json: true },
    );
    expect(code).toBe(0);
    const replies = text()
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(replies).toHaveLength(2);
    expect(replies[0]).toMatchObject({ user_id: 'jay', kind: 'answer', text: expect.stringContaining('Commands:') });
    expect(replies[1]).toMatchObject({ user_id: 'jay', kind: 'answer', text: 'It is 10:00.', request_id: expect.any(String) });
    expect(replies[0]!['request_id']).not.toBe(replies[1]!['request_id']);
  });

  it('piped input and no Core answering: says so and exits 2 without waiting for the rest', async () => {
    harness = await startHarness({ plugins: [timeDescriptor], withLlm: false });
    await harness.channels.stop();
    const input = new PassThrough();
    const output = new PassThrough();
    const errors = new PassThrough();
    const diagnostics = collect(errors);
    input.end('hello?\nanyone?\n');
    expect(await runChat({ url: harness.broker.url, channel: 'cli', user: 'kim', timeoutSec: 0.3 }, { input, output, errors })).toBe(2);
    expect(diagnostics()).toMatch(/No reply within 0.3 s/);
  });
});

describe('formatReply', () => {
  it('marks questions, errors and notifications (a reminder arriving between turns)', () => {
    const base = { request_id: 'r', user_id: 'u', text: 'Reminder: call mom' };
    expect(formatReply({ ...base, kind: 'notification' })).toBe('homeclaw (notification)> Reminder: call mom');
    expect(formatReply({ ...base, kind: 'question' })).toBe('homeclaw (question)> Reminder: call mom');
    expect(formatReply({ ...base, kind: 'answer' })).toBe('homeclaw> Reminder: call mom');
  });
});
