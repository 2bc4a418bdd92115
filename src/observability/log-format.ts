// How log lines look: JSON lines for machines (files, journald, Docker, log shippers), or one readable
// line per event for a person at a terminal. Both come from the same pino records after redaction, so
// the pretty form never shows a secret the JSON form would hide.
import { Writable } from 'node:stream';
import type { DestinationStream } from 'pino';
import PinoPretty from 'pino-pretty';

export type LogFormat = 'pretty' | 'json';
export type LogFormatSetting = LogFormat | 'auto';

/** auto picks pretty only when the log's own stream is a terminal: `homeclaw start 2>core.log` stays JSON. */
export function resolveLogFormat(setting: LogFormatSetting | undefined, streamIsTty: boolean): LogFormat {
  if (setting === 'pretty' || setting === 'json') return setting;
  return streamIsTty ? 'pretty' : 'json';
}

/** Colours only on a terminal, and never when NO_COLOR is set (https://no-color.org). */
export function useColours(streamIsTty: boolean, env: Record<string, string | undefined> = process.env): boolean {
  return streamIsTty && (env.NO_COLOR === undefined || env.NO_COLOR === '');
}

export interface PrettyOptions {
  /** A file descriptor or a stream; default stderr. */
  destination?: number | DestinationStream | NodeJS.WritableStream;
  colorize: boolean;
}

/**
 * `14:03:07.123 INFO [registry] Loaded built-in plugin time 1.0.0 plugin_id="time"`: time, level, the
 * room in brackets, the message, then the remaining fields on the same line (an error's stack follows
 * on its own lines).
 */
export function prettyDestination(options: PrettyOptions): DestinationStream {
  return PinoPretty({
    destination: asStream(options.destination ?? 2),
    // A person reads these lines at the pace they come; writing synchronously costs nothing noticeable
    // and keeps the last lines before an exit (a crash message above all) from being lost.
    sync: true,
    colorize: options.colorize,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,app,room',
    messageFormat: '{if room}[{room}] {end}{msg}',
  });
}

/** pino-pretty pipes into its destination, so a bare `{ write }` object is wrapped in a stream. */
function asStream(destination: number | DestinationStream | NodeJS.WritableStream): number | NodeJS.WritableStream {
  if (typeof destination === 'number' || typeof (destination as { on?: unknown }).on === 'function') return destination as number | NodeJS.WritableStream;
  const sink = destination as DestinationStream;
  return new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      sink.write(chunk.toString());
      done();
    },
  });
}
