// The Wyoming wire format (rhasspy/wyoming, README "Format"): each event is one JSON header line
// `{"type", "data"?, "data_length"?, "payload_length"?, "version"?}\n`, then `data_length` bytes of
// JSON merged on top of the header's `data`, then `payload_length` bytes of binary payload. Both ways
// of carrying data are accepted: inline in the header, or as the separate block (which is what the
// reference Python writer and so Home Assistant send).
//
// The decoder is incremental (TCP delivers arbitrary slices) and bounded: a header line, a data block
// or a payload over its limit is a protocol error, reported before the bytes are buffered.
import { isPlainObject } from '../kit/plain-object.js';

/** The version of the wyoming package whose events this implementation follows; sent in every header. */
export const WYOMING_PROTOCOL_VERSION = '1.9.0';

export interface WyomingEvent {
  type: string;
  data: Record<string, unknown>;
  /** Payload bytes announced by the header. Payloads are skipped, never buffered: no event this server handles carries one. */
  payload_length: number;
}

export interface FrameLimits {
  max_line_bytes: number;
  max_data_bytes: number;
  max_payload_bytes: number;
}

export type FrameErrorCode = 'malformed-frame' | 'frame-too-large';

export class FrameError extends Error {
  constructor(
    readonly code: FrameErrorCode,
    message: string,
  ) {
    super(message);
  }
}

const NEWLINE = 0x0a;
const MAX_TYPE_LENGTH = 128;

type State = { kind: 'header' } | { kind: 'data'; header: PendingHeader } | { kind: 'payload'; event: WyomingEvent; remaining: number };

interface PendingHeader {
  type: string;
  data: Record<string, unknown>;
  data_length: number;
  payload_length: number;
}

function lengthField(header: Record<string, unknown>, name: 'data_length' | 'payload_length', limit: number): number {
  const value = header[name];
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new FrameError('malformed-frame', `"${name}" must be a non-negative integer`);
  }
  if (value > limit) throw new FrameError('frame-too-large', `"${name}" is ${value} bytes; the limit is ${limit}`);
  return value;
}

function parseHeader(line: Buffer, limits: FrameLimits): PendingHeader {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line.toString('utf8'));
  } catch (error) {
    throw new FrameError('malformed-frame', `the header line is not JSON: ${(error as Error).message}`);
  }
  if (!isPlainObject(parsed)) throw new FrameError('malformed-frame', 'the header line must be a JSON object');
  const type = parsed.type;
  if (typeof type !== 'string' || type.length === 0 || type.length > MAX_TYPE_LENGTH) {
    throw new FrameError('malformed-frame', `"type" must be a non-empty string of at most ${MAX_TYPE_LENGTH} characters`);
  }
  const data = parsed.data;
  if (data !== undefined && data !== null && !isPlainObject(data)) throw new FrameError('malformed-frame', '"data" must be a JSON object');
  return {
    type,
    data: isPlainObject(data) ? data : {},
    data_length: lengthField(parsed, 'data_length', limits.max_data_bytes),
    payload_length: lengthField(parsed, 'payload_length', limits.max_payload_bytes),
  };
}

/** Splits a byte stream into Wyoming events. `push` throws a FrameError on the first protocol error. */
export class WyomingDecoder {
  private buffer: Buffer = Buffer.alloc(0);
  private state: State = { kind: 'header' };

  constructor(private readonly limits: FrameLimits) {}

  /** Feeds received bytes; returns the events they complete, in order. */
  push(chunk: Buffer): WyomingEvent[] {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const events: WyomingEvent[] = [];
    for (;;) {
      const event = this.next();
      if (event === 'need-more') return events;
      if (event) events.push(event);
    }
  }

  /** True while an event has started but not all of its bytes have arrived. */
  get midFrame(): boolean {
    return this.state.kind !== 'header' || this.buffer.length > 0;
  }

  private next(): WyomingEvent | undefined | 'need-more' {
    switch (this.state.kind) {
      case 'header': {
        const end = this.buffer.indexOf(NEWLINE);
        if (end === -1) {
          if (this.buffer.length > this.limits.max_line_bytes) {
            throw new FrameError('frame-too-large', `the header line exceeds ${this.limits.max_line_bytes} bytes`);
          }
          return 'need-more';
        }
        if (end > this.limits.max_line_bytes) throw new FrameError('frame-too-large', `the header line exceeds ${this.limits.max_line_bytes} bytes`);
        const line = this.buffer.subarray(0, end);
        this.buffer = this.buffer.subarray(end + 1);
        // Blank lines (a stray CRLF from a hand-typed session) carry no event.
        if (line.toString('utf8').trim() === '') return undefined;
        const header = parseHeader(line, this.limits);
        if (header.data_length > 0) this.state = { kind: 'data', header };
        else return this.afterData({ type: header.type, data: header.data, payload_length: header.payload_length });
        return undefined;
      }
      case 'data': {
        const { header } = this.state;
        if (this.buffer.length < header.data_length) return 'need-more';
        const block = this.buffer.subarray(0, header.data_length);
        this.buffer = this.buffer.subarray(header.data_length);
        let extra: unknown;
        try {
          extra = JSON.parse(block.toString('utf8'));
        } catch (error) {
          throw new FrameError('malformed-frame', `the data block is not JSON: ${(error as Error).message}`);
        }
        if (!isPlainObject(extra)) throw new FrameError('malformed-frame', 'the data block must be a JSON object');
        // The block is merged on top of the header's data, as the reference reader does.
        return this.afterData({ type: header.type, data: { ...header.data, ...extra }, payload_length: header.payload_length });
      }
      case 'payload': {
        if (this.buffer.length === 0) return 'need-more';
        const skipped = Math.min(this.state.remaining, this.buffer.length);
        this.buffer = this.buffer.subarray(skipped);
        const remaining = this.state.remaining - skipped;
        if (remaining > 0) {
          this.state = { ...this.state, remaining };
          return 'need-more';
        }
        const { event } = this.state;
        this.state = { kind: 'header' };
        return event;
      }
    }
  }

  private afterData(event: WyomingEvent): WyomingEvent | undefined {
    if (event.payload_length > 0) {
      this.state = { kind: 'payload', event, remaining: event.payload_length };
      return undefined;
    }
    this.state = { kind: 'header' };
    return event;
  }
}

/**
 * One event as the reference writer frames it: the header line with `version` and, when there is data,
 * `data_length`, followed by the data block (UTF-8 JSON).
 */
export function encodeEvent(type: string, data?: Record<string, unknown>): Buffer {
  const header: Record<string, unknown> = { type, version: WYOMING_PROTOCOL_VERSION };
  const hasData = data !== undefined && Object.keys(data).length > 0;
  const block = hasData ? Buffer.from(JSON.stringify(data), 'utf8') : undefined;
  if (block) header.data_length = block.length;
  const line = Buffer.from(`${JSON.stringify(header)}\n`, 'utf8');
  return block ? Buffer.concat([line, block]) : line;
}
