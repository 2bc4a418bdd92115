import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { guardFirstPacket } from '../../src/bus/first-packet-guard.js';

class FakeStream extends EventEmitter {
  destroyed = false;
  destroy(): void {
    this.destroyed = true;
  }
  feed(...chunks: number[][]): void {
    for (const chunk of chunks) this.emit('data', Buffer.from(chunk));
  }
}

describe('guardFirstPacket', () => {
  it('closes the stream once the first packet announces more than the limit, however the header is split', () => {
    const stream = new FakeStream();
    const refused: number[] = [];
    guardFirstPacket(stream, (n) => refused.push(n), 1000);
    stream.feed([0x10], [0xe9], [0x07]); // 1001 bytes: 0x69 + 0x07 * 128
    expect(stream.destroyed).toBe(true);
    expect(refused).toEqual([1001]);
    expect(stream.listenerCount('data')).toBe(0);
  });

  it('lets a first packet within the limit through, and stops watching after its header', () => {
    const stream = new FakeStream();
    guardFirstPacket(stream, () => expect.fail('refused'), 1000);
    stream.feed([0x10, 0xe8, 0x07, 0x00, 0x04]); // exactly 1000 bytes
    expect(stream.destroyed).toBe(false);
    expect(stream.listenerCount('data')).toBe(0);
    // Later packets are the logged-in client's: not this guard's business.
    stream.feed([0x30, 0xff, 0xff, 0xff, 0x7f]);
    expect(stream.destroyed).toBe(false);
  });

  it('refuses as soon as the length read so far is over the limit, before its last byte', () => {
    const stream = new FakeStream();
    const refused: number[] = [];
    guardFirstPacket(stream, (n) => refused.push(n), 64 * 1024);
    stream.feed([0x10, 0xff, 0xff, 0xff]);
    expect(stream.destroyed).toBe(true);
    expect(refused[0]).toBeGreaterThan(64 * 1024);
  });
});
