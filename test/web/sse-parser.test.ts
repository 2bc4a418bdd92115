// The dashboard's text/event-stream parser against the format's rules: any line ending, chunks split
// anywhere, comments, multi-line data, the optional space, events without data, retry.
import { describe, expect, it } from 'vitest';
import { SseParser, type SseMessage } from '../../web/src/sse-parser.js';

function parse(chunks: string[]): { messages: SseMessage[]; retries: number[] } {
  const messages: SseMessage[] = [];
  const retries: number[] = [];
  const parser = new SseParser(
    (m) => messages.push(m),
    (ms) => retries.push(ms),
  );
  for (const chunk of chunks) parser.push(chunk);
  return { messages, retries };
}

const STREAM = 'retry: 2000\nevent: ready\ndata: {}\n\n: keep-alive\n\nevent: registry\ndata: {"a":1}\n\ndata: line one\ndata:line two\n\n';
const EXPECTED: SseMessage[] = [
  { event: 'ready', data: '{}' },
  { event: 'registry', data: '{"a":1}' },
  { event: 'message', data: 'line one\nline two' },
];

describe('SseParser', () => {
  it('reads events, comments, multi-line data and retry', () => {
    expect(parse([STREAM])).toEqual({ messages: EXPECTED, retries: [2000] });
  });

  it('gives the same events however the stream is cut into chunks', () => {
    for (let size = 1; size <= 7; size++) {
      const chunks = STREAM.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g')) ?? [];
      expect(parse(chunks).messages, `chunks of ${size}`).toEqual(EXPECTED);
    }
  });

  it('accepts CRLF and CR line endings, a CRLF split across chunks included', () => {
    expect(parse(['event: a\r\ndata: 1\r', '\n\r\n']).messages).toEqual([{ event: 'a', data: '1' }]);
    // A CR at the end of a chunk may be half of a CRLF: the next chunk settles it.
    expect(parse(['event: b\rdata: 2\r\r']).messages).toEqual([]);
    expect(parse(['event: b\rdata: 2\r\r', ': next\r']).messages).toEqual([{ event: 'b', data: '2' }]);
  });

  it('dispatches nothing for an event without data, nor for an unfinished one', () => {
    expect(parse(['event: empty\n\nevent: x\ndata: half']).messages).toEqual([]);
  });

  it('keeps a value after the first colon intact and ignores unknown fields and a bad retry', () => {
    expect(parse(['data: a: b\nid: 7\nfoo: bar\nretry: soon\n\n'])).toEqual({ messages: [{ event: 'message', data: 'a: b' }], retries: [] });
  });
});
