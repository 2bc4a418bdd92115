// A raw Wyoming client for tests, written from the protocol's README (rhasspy/wyoming, "Format"): a JSON
// header line, then `data_length` bytes of JSON data, then `payload_length` bytes of payload. It can send
// data inline in the header or as the separate block, and any raw bytes, and reads events back with its
// own parser (independent of the server's decoder).
import { connect, type Socket } from 'node:net';

export interface ReceivedEvent {
  type: string;
  data: Record<string, unknown>;
  version?: unknown;
  payload: Buffer;
}

export type Framing = 'inline' | 'block';

export interface WyomingTestClient {
  socket: Socket;
  send(type: string, data?: Record<string, unknown>, framing?: Framing): void;
  sendRaw(bytes: Buffer | string): void;
  /** The next event, or rejects on timeout or when the connection closes first. */
  next(timeoutMs?: number): Promise<ReceivedEvent>;
  /** Resolves when the server closed the connection. */
  closed: Promise<void>;
  isClosed(): boolean;
  close(): void;
}

/** A frame as the protocol describes it; `block` puts data after the header with data_length. */
export function frame(type: string, data: Record<string, unknown> = {}, framing: Framing = 'block', payload?: Buffer): Buffer {
  const header: Record<string, unknown> = { type, version: '1.9.0' };
  let block: Buffer | undefined;
  if (framing === 'inline') header.data = data;
  else if (Object.keys(data).length > 0) {
    block = Buffer.from(JSON.stringify(data), 'utf8');
    header.data_length = block.length;
  }
  if (payload) header.payload_length = payload.length;
  return Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`, 'utf8'), block ?? Buffer.alloc(0), payload ?? Buffer.alloc(0)]);
}

export function connectWyoming(port: number, host = '127.0.0.1'): Promise<WyomingTestClient> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host });
    let buffer = Buffer.alloc(0);
    const events: ReceivedEvent[] = [];
    const waiters: { resolve: (e: ReceivedEvent) => void; reject: (e: Error) => void }[] = [];
    let closed = false;
    let resolveClosed!: () => void;
    const closedPromise = new Promise<void>((r) => (resolveClosed = r));

    const parse = (): void => {
      for (;;) {
        const end = buffer.indexOf(0x0a);
        if (end === -1) return;
        const header = JSON.parse(buffer.subarray(0, end).toString('utf8')) as Record<string, unknown>;
        const dataLength = typeof header.data_length === 'number' ? header.data_length : 0;
        const payloadLength = typeof header.payload_length === 'number' ? header.payload_length : 0;
        if (buffer.length < end + 1 + dataLength + payloadLength) return;
        const block = buffer.subarray(end + 1, end + 1 + dataLength);
        const payload = buffer.subarray(end + 1 + dataLength, end + 1 + dataLength + payloadLength);
        buffer = buffer.subarray(end + 1 + dataLength + payloadLength);
        const data = {
          ...((header.data as Record<string, unknown> | undefined) ?? {}),
          ...(dataLength > 0 ? (JSON.parse(block.toString('utf8')) as Record<string, unknown>) : {}),
        };
        const event: ReceivedEvent = { type: String(header.type), data, version: header.version, payload: Buffer.from(payload) };
        const waiter = waiters.shift();
        if (waiter) waiter.resolve(event);
        else events.push(event);
      }
    };

    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      parse();
    });
    socket.on('close', () => {
      closed = true;
      resolveClosed();
      for (const waiter of waiters.splice(0)) waiter.reject(new Error('connection closed before the next event'));
    });
    socket.on('error', (error) => {
      if (!closed) reject(error);
    });
    socket.once('connect', () =>
      resolve({
        socket,
        send: (type, data = {}, framing = 'block') => socket.write(frame(type, data, framing)),
        sendRaw: (bytes) => socket.write(bytes),
        next(timeoutMs = 10_000) {
          const queued = events.shift();
          if (queued) return Promise.resolve(queued);
          if (closed) return Promise.reject(new Error('connection closed before the next event'));
          return new Promise<ReceivedEvent>((res, rej) => {
            const timer = setTimeout(() => rej(new Error(`no Wyoming event within ${timeoutMs} ms`)), timeoutMs);
            waiters.push({
              resolve: (e) => {
                clearTimeout(timer);
                res(e);
              },
              reject: (e) => {
                clearTimeout(timer);
                rej(e);
              },
            });
          });
        },
        closed: closedPromise,
        isClosed: () => closed,
        close: () => socket.destroy(),
      }),
    );
  });
}
