// The log format: pretty on a terminal, JSON otherwise, forced either way by the setting; the pretty
// form is one line per event and keeps secrets redacted exactly like the JSON form.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import { resolveLogFormat, useColours } from '../../src/observability/log-format.js';

function capture(format: 'pretty' | 'json' | 'auto'): { log: ReturnType<typeof createLogger>; text: () => string } {
  const chunks: string[] = [];
  const log = createLogger({ level: 'info', format, destination: { write: (chunk: string) => void chunks.push(chunk) } });
  return { log, text: () => chunks.join('') };
}

describe('log format', () => {
  it('auto is pretty on a terminal and JSON elsewhere; pretty and json are forced', () => {
    expect(resolveLogFormat('auto', true)).toBe('pretty');
    expect(resolveLogFormat('auto', false)).toBe('json');
    expect(resolveLogFormat(undefined, true)).toBe('pretty');
    expect(resolveLogFormat('json', true)).toBe('json');
    expect(resolveLogFormat('pretty', false)).toBe('pretty');
  });

  it('colours only on a terminal and never with NO_COLOR', () => {
    expect(useColours(true, {})).toBe(true);
    expect(useColours(false, {})).toBe(false);
    expect(useColours(true, { NO_COLOR: '1' })).toBe(false);
  });

  it('pretty: one line per event with time, level, room, message and fields; secrets redacted', async () => {
    const { log, text } = capture('pretty');
    log.child({ room: 'registry' }).info({ plugin_id: 'time', version: '1.0.0' }, 'Loaded built-in plugin time');
    log.warn({ token: 'tok-123456', api_key: 'sk-abcdef', headers: { authorization: 'Bearer xyz' } }, 'secrets around');
    // pino-pretty passes lines through a stream pipeline: they arrive on a later tick.
    for (let i = 0; i < 100 && text().split('\n').length < 3; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    const lines = text().trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: \[registry\] Loaded built-in plugin time \{"plugin_id":"time","version":"1.0.0"\}$/);
    expect(lines[1]).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: secrets around /);
    expect(text()).not.toMatch(/tok-123456|sk-abcdef|xyz/);
    expect(text()).toContain('[redacted]');
    expect(text()).not.toContain('\u001b[');
  });

  it('json: one JSON object per line with the same redaction; a captured stream gets JSON under auto', () => {
    for (const format of ['json', 'auto'] as const) {
      const { log, text } = capture(format);
      log.info({ password: 'hunter2', room: 'bus' }, 'hello');
      const line = JSON.parse(text().trim()) as Record<string, unknown>;
      expect(line).toMatchObject({ level: 30, msg: 'hello', password: '[redacted]', room: 'bus', app: 'homeclaw' });
    }
  });

  it('log_format is a setting with an environment override and a clear error for a bad value', () => {
    expect(loadConfig({ env: {} })).toMatchObject({ ok: true, config: { log_format: 'auto' } });
    expect(loadConfig({ env: { HOMECLAW_LOG_FORMAT: 'pretty' } })).toMatchObject({ ok: true, config: { log_format: 'pretty' } });
    expect(loadConfig({ env: {}, overrides: { log_format: 'json' } })).toMatchObject({ ok: true, config: { log_format: 'json' } });
    const bad = loadConfig({ env: { HOMECLAW_LOG_FORMAT: 'fancy' } });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.errors).toEqual([expect.objectContaining({ path: '/log_format' })]);
  });
});
