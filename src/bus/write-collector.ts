// Everything an MQTT client writes to its socket during one turn of the event loop leaves in one write.
// mqtt.js encodes a packet as many small writes (header, length, topic, packet id, each MQTT 5 property,
// payload): an MQTT 5 invoke with its expiry and traceparent is about 15 of them. A corked socket still
// pays the stream machinery for every one (a few hundred ns each); collecting the chunks in an array and
// writing their concatenation once, in the check phase of the same turn, costs a fraction of that and
// delays nothing past the turn it was written in.
import type { Writable } from 'node:stream';

type WriteCallback = (error?: Error | null) => void;

interface CollectedStream {
  write(chunk: unknown, encoding?: unknown, callback?: unknown): boolean;
  end(...args: unknown[]): unknown;
  destroyed?: boolean;
  writableEnded?: boolean;
  writableNeedDrain?: boolean;
}

const installed = new WeakSet<object>();

/**
 * Replaces `stream.write` (on this instance only) by a collector flushed once per event-loop turn, and
 * `stream.end` by one that flushes first. Writes with a callback flush what is pending and go straight
 * through, so ordering and completion signals are kept. Idempotent per stream.
 */
export function collectWrites(stream: Writable): void {
  const target = stream as unknown as CollectedStream;
  if (installed.has(target)) return;
  installed.add(target);
  const write = target.write.bind(target) as (chunk: unknown, encoding?: unknown, callback?: unknown) => boolean;
  const end = target.end.bind(target) as (...args: unknown[]) => unknown;
  let chunks: Buffer[] = [];
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (chunks.length === 0) return;
    const data = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    chunks = [];
    // A stream closed meanwhile takes nothing more; its owner has seen the close.
    if (!target.destroyed && target.writableEnded !== true) write(data);
  };
  target.write = (chunk: unknown, encoding?: unknown, callback?: unknown): boolean => {
    if (typeof encoding === 'function' || typeof callback === 'function' || !(typeof chunk === 'string' || Buffer.isBuffer(chunk))) {
      flush();
      return write(chunk, encoding, callback as WriteCallback | undefined);
    }
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8') : chunk);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
    return target.writableNeedDrain !== true;
  };
  target.end = (...args: unknown[]): unknown => {
    flush();
    return end(...args);
  };
}
