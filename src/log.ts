// One logger for the Core. Secrets never reach a log line: the redact list covers every field that
// can carry one (tokens, passwords, API keys, Authorization headers).
import { pino, destination, type DestinationStream, type Logger as PinoLogger } from 'pino';
import { prettyDestination, resolveLogFormat, useColours, type LogFormatSetting } from './observability/log-format.js';

export type Logger = PinoLogger;

export const REDACT_PATHS = [
  'password',
  'token',
  'admin_token',
  'api_key',
  'apiKey',
  'authorization',
  '*.password',
  '*.token',
  '*.admin_token',
  '*.api_key',
  '*.apiKey',
  '*.authorization',
  'headers.authorization',
  'req.headers.authorization',
];

export interface LoggerOptions {
  level?: string;
  /** Where lines go; defaults to stderr so stdout stays free for CLI output and MCP stdio. */
  destination?: DestinationStream;
  /** auto (default): readable lines when stderr is a terminal, JSON lines otherwise. */
  format?: LogFormatSetting;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? process.env.HOMECLAW_LOG_LEVEL ?? 'info',
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { app: 'homeclaw' },
    },
    logDestination(options),
  );
}

function logDestination(options: LoggerOptions): DestinationStream {
  // A caller-supplied destination is a test capturing lines: it gets JSON unless pretty is asked for.
  const isTty = options.destination ? false : process.stderr.isTTY === true;
  if (resolveLogFormat(options.format, isTty) === 'pretty') {
    return prettyDestination({ ...(options.destination ? { destination: options.destination } : {}), colorize: useColours(isTty) });
  }
  return options.destination ?? destination({ fd: 2, sync: false });
}

/** A logger that drops everything, for unit tests that do not inspect logs. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
