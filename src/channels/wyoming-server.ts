// Home Assistant Assist (and any Wyoming client) talks to HomeClaw through a Wyoming "handle" service:
// `describe` → `info` naming one handle program; `transcript` → the conversation engine → `handled`
// with the answer (or `not-handled` with the reason); `ping` → `pong`. Home Assistant opens one
// connection for the describe at setup and one per spoken command.
//
// A connection that breaks the framing (a line that is not a JSON event, a frame over its limit) gets an
// `error` event and is closed; no other connection is affected. Events of one connection are handled
// in order; connections run concurrently, as the engine serialises only turns of the same session.
import { randomUUID } from 'node:crypto';
import { isIP, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { ConversationEngine } from '../conversation/engine.js';
import type { Logger } from '../log.js';
import { encodeEvent, FrameError, WyomingDecoder, type FrameLimits, type WyomingEvent } from './wyoming-framing.js';
import { buildInfoData } from './wyoming-info.js';
import { resolveSpeaker, type SpeakerSettings } from './wyoming-speaker.js';
import { isPlainObject } from '../kit/plain-object.js';

export const WYOMING_CHANNEL = 'wyoming';

export interface WyomingSettings extends FrameLimits, SpeakerSettings {
  port: number;
  host: string;
  languages: readonly string[];
  name: string;
  supports_home_control: boolean;
  allow_from: readonly string[];
  max_connections: number;
  idle_timeout_sec: number;
}

export interface WyomingServerOptions {
  settings: WyomingSettings;
  engine: Pick<ConversationEngine, 'handleMessage'>;
  log: Logger;
  /** Announced as the program's version. */
  version: string;
}

export interface WyomingServer {
  host: string;
  port: number;
  connectionCount(): number;
  /** Stops accepting, closes every connection and waits for answers still being computed. */
  stop(): Promise<void>;
}

/** Events a client may pipeline behind the one being handled before the connection counts as abusive. */
const MAX_QUEUED_EVENTS = 32;
/** How long a closing connection may take to flush its last event before it is destroyed. */
const CLOSE_GRACE_MS = 2_000;

/** Problems with the listener settings that the config schema cannot express. */
export function wyomingSettingsProblems(settings: Pick<WyomingSettings, 'allow_from'>): string[] {
  return settings.allow_from
    .filter((address) => isIP(normaliseAddress(address)) === 0)
    .map((address) => `wyoming.allow_from: "${address}" is not an IP address`);
}

/** IPv4 clients of a dual-stack listener appear as ::ffff:a.b.c.d; both spellings name the same client. */
function normaliseAddress(address: string): string {
  return address.toLowerCase().startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address.toLowerCase();
}

export async function startWyomingServer(options: WyomingServerOptions): Promise<WyomingServer> {
  const { settings, engine, log } = options;
  const allowed = new Set(settings.allow_from.map(normaliseAddress));
  const infoEvent = encodeEvent('info', buildInfoData({ ...settings, version: options.version }));
  const sockets = new Set<Socket>();
  const inFlight = new Set<Promise<void>>();

  function serve(socket: Socket): void {
    const remote = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`;
    const clientLog = log.child({ wyoming_client: remote });
    if (allowed.size > 0 && !allowed.has(normaliseAddress(socket.remoteAddress ?? ''))) {
      clientLog.warn('Wyoming connection refused: the address is not in wyoming.allow_from');
      socket.destroy();
      return;
    }
    if (sockets.size >= settings.max_connections) {
      clientLog.warn({ max_connections: settings.max_connections }, 'Wyoming connection refused: too many connections');
      socket.end(encodeEvent('error', { text: 'too many connections', code: 'busy' }));
      setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
      return;
    }
    sockets.add(socket);
    socket.setNoDelay(true);
    socket.setTimeout(settings.idle_timeout_sec * 1000);
    const decoder = new WyomingDecoder(settings);
    const queue: WyomingEvent[] = [];
    let working = false;
    let closing = false;
    let clientEnded = false;

    const send = (type: string, data?: Record<string, unknown>): void => {
      if (!socket.destroyed && socket.writable) socket.write(encodeEvent(type, data));
    };

    const close = (why: string, error?: { code: string; text: string }): void => {
      if (closing) return;
      closing = true;
      queue.length = 0;
      if (error && !socket.destroyed && socket.writable) socket.end(encodeEvent('error', error));
      else socket.end();
      setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
      clientLog.debug({ why }, 'Wyoming connection closing');
    };

    const drain = async (): Promise<void> => {
      working = true;
      try {
        for (let event = queue.shift(); event && !closing; event = queue.shift()) await handle(event);
      } finally {
        working = false;
        // A client that half-closed after its last event gets the answers first, then the close.
        if (clientEnded && !socket.destroyed) socket.end();
      }
    };

    async function handle(event: WyomingEvent): Promise<void> {
      switch (event.type) {
        case 'describe':
          if (!socket.destroyed && socket.writable) socket.write(infoEvent);
          return;
        case 'transcript':
          return transcript(event);
        case 'ping':
          send('pong', typeof event.data.text === 'string' ? { text: event.data.text } : {});
          return;
        case 'transcript-start':
        case 'transcript-chunk':
        case 'transcript-stop':
          // Streamed transcripts always end with the complete `transcript` event, which is answered.
          return;
        default:
          clientLog.debug({ type: event.type }, 'Wyoming event ignored: not handled by a handle service');
      }
    }

    async function transcript(event: WyomingEvent): Promise<void> {
      const context = isPlainObject(event.data.context) ? event.data.context : undefined;
      const reply = (type: 'handled' | 'not-handled', text: string): void => send(type, { text, ...(context ? { context } : {}) });
      const text = event.data.text;
      if (typeof text !== 'string') {
        clientLog.warn('Wyoming transcript without a text string');
        reply('not-handled', 'The transcript has no text.');
        return;
      }
      const speaker = resolveSpeaker(context, settings);
      const started = Date.now();
      const request_id = randomUUID();
      const answer = await engine.handleMessage({
        channel: WYOMING_CHANNEL,
        channel_type: 'wyoming',
        user_id: speaker.user_id,
        session_id: speaker.session_id,
        text,
        request_id,
      });
      const handled = answer.kind !== 'error';
      clientLog.info(
        {
          request_id,
          user_id: speaker.user_id,
          matched_by: speaker.matched_by,
          session_id: speaker.session_id,
          language: typeof event.data.language === 'string' ? event.data.language : undefined,
          kind: answer.kind,
          plugin_id: answer.plugin_id,
          ms: Date.now() - started,
        },
        handled ? 'Wyoming transcript handled' : 'Wyoming transcript not handled',
      );
      reply(handled ? 'handled' : 'not-handled', answer.text);
    }

    socket.on('data', (chunk: Buffer) => {
      if (closing) return;
      let events: WyomingEvent[];
      try {
        events = decoder.push(chunk);
      } catch (error) {
        if (error instanceof FrameError) {
          clientLog.warn({ code: error.code, reason: error.message }, 'Wyoming connection closed: bad frame');
          close(error.code, { code: error.code, text: error.message });
        } else {
          clientLog.error({ err: error }, 'Wyoming decoding failed');
          close('internal error', { code: 'internal-error', text: 'the server failed to read the event' });
        }
        return;
      }
      queue.push(...events);
      if (queue.length > MAX_QUEUED_EVENTS) {
        clientLog.warn({ queued: queue.length }, 'Wyoming connection closed: too many events waiting');
        close('flood', { code: 'too-many-events', text: `more than ${MAX_QUEUED_EVENTS} events are waiting to be handled` });
        return;
      }
      if (!working && queue.length > 0) {
        const task = drain().catch((error: unknown) => {
          clientLog.error({ err: error }, 'Wyoming event handling failed');
          close('internal error', { code: 'internal-error', text: 'the server failed to handle the event' });
        });
        inFlight.add(task);
        void task.finally(() => inFlight.delete(task));
      }
    });
    socket.on('timeout', () => {
      // A connection waiting for its answer is not idle, however long the engine takes.
      if (working) {
        socket.setTimeout(settings.idle_timeout_sec * 1000);
        return;
      }
      clientLog.info({ idle_timeout_sec: settings.idle_timeout_sec }, 'Wyoming connection closed: idle');
      close('idle');
    });
    socket.on('end', () => {
      clientEnded = true;
      if (decoder.midFrame) clientLog.warn('Wyoming client closed the connection in the middle of an event');
      // The answer to an event already received still goes out before the socket closes (see drain).
      if (!working) socket.end();
    });
    socket.on('error', (error) => clientLog.debug({ err: error.message }, 'Wyoming socket error'));
    socket.on('close', () => {
      sockets.delete(socket);
      closing = true;
    });
  }

  const server: Server = createServer({ allowHalfOpen: true }, serve);
  server.maxConnections = settings.max_connections * 2; // the per-server check above answers with a reason first
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: Error) => reject(new Error(`Wyoming: cannot listen on ${settings.host}:${settings.port}: ${error.message}`)));
    server.listen(settings.port, settings.host, () => {
      server.removeAllListeners('error');
      resolve();
    });
  });
  server.on('error', (error) => log.error({ err: error }, 'Wyoming server error'));
  const { port } = server.address() as AddressInfo;
  log.info({ host: settings.host, port, user_id: settings.user_id, mapped: Object.keys(settings.users).length }, 'Wyoming conversation agent listening');

  let stopping: Promise<void> | undefined;
  return {
    host: settings.host,
    port,
    connectionCount: () => sockets.size,
    stop() {
      stopping ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const socket of sockets) socket.destroy();
        await Promise.allSettled([...inFlight]);
        await closed;
      })();
      return stopping;
    },
  };
}
