// A pino logger whose JSON lines tests can read.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { Logger } from '../../src/log.js';

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

export function memoryLogger(level = 'info'): { log: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim()) lines.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  return { log: pino({ level }, stream), lines };
}
