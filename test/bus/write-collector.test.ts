import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { collectWrites } from '../../src/bus/write-collector.js';

function recorder(): { stream: Writable; writes: Buffer[] } {
  const writes: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      writes.push(Buffer.from(chunk));
      done();
    },
  });
  return { stream, writes };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('collecting the writes of one event-loop turn', () => {
  it('writes everything of a turn once, in order, strings and buffers alike', async () => {
    const { stream, writes } = recorder();
    collectWrites(stream);
    stream.write(Buffer.from([0x30]));
    stream.write('topic', 'utf8');
    stream.write(Buffer.from('payload'));
    expect(writes).toEqual([]);
    await turn();
    await turn();
    expect(writes.map((w) => w.toString('latin1'))).toEqual(['\x30topicpayload']);
    stream.write('next');
    await turn();
    await turn();
    expect(writes.map((w) => w.toString())).toEqual(['\x30topicpayload', 'next']);
  });

  it('flushes what is pending before a write with a callback, and before end', async () => {
    const { stream, writes } = recorder();
    collectWrites(stream);
    stream.write('a');
    await new Promise<void>((resolve) => stream.write('b', () => resolve()));
    expect(writes.map((w) => w.toString())).toEqual(['a', 'b']);
    stream.write('c');
    await new Promise<void>((resolve) => stream.end(() => resolve()));
    expect(writes.map((w) => w.toString())).toEqual(['a', 'b', 'c']);
  });

  it('is installed once per stream', async () => {
    const { stream, writes } = recorder();
    collectWrites(stream);
    collectWrites(stream);
    stream.write('x');
    await turn();
    await turn();
    expect(writes.map((w) => w.toString())).toEqual(['x']);
  });
});
