// The Core's side of the host protocol and the child environment, without processes.
import { describe, expect, it } from 'vitest';
import { pythonChildEnv } from '../../../src/bridges/python/child-env.js';
import { parseHostLine } from '../../../src/bridges/python/protocol.js';

describe('host protocol lines', () => {
  it('reads hello, fatal and result messages', () => {
    expect(parseHostLine('{"type":"hello","protocol":1,"pid":3,"python":"3.11.2","plugins":[{"class":"A","methods":["invoke"]}]}')).toMatchObject({
      ok: true,
      message: { type: 'hello', pid: 3, skipped: [], plugins: [{ class: 'A' }] },
    });
    expect(parseHostLine('{"type":"fatal","error":"importing plugin.py failed: SyntaxError"}')).toEqual({
      ok: true,
      message: { type: 'fatal', error: 'importing plugin.py failed: SyntaxError', traceback: null },
    });
    expect(parseHostLine('{"type":"result","id":"r1","ok":true,"value":"103"}')).toMatchObject({ ok: true, message: { id: 'r1', value: '103' } });
  });

  it('reports anything else instead of throwing', () => {
    expect(parseHostLine('hello world')).toEqual({ ok: false, problem: 'not JSON: "hello world"' });
    expect(parseHostLine('[1,2]')).toEqual({ ok: false, problem: 'not a JSON object' });
    expect(parseHostLine('{"type":"result","ok":true}')).toEqual({ ok: false, problem: 'result without id or ok' });
    expect(parseHostLine('{"type":"hello","pid":1,"plugins":[{"class":2}]}')).toEqual({ ok: false, problem: 'hello with a malformed plugin entry' });
    expect(parseHostLine('{"type":"shout"}')).toEqual({ ok: false, problem: 'unknown message type "shout"' });
  });
});

describe('child environment', () => {
  const core = { PATH: '/usr/bin', HOME: '/home/c', LANG: 'C.UTF-8', TZ: 'UTC', HOMECLAW_ADMIN_TOKEN: 't', OPENAI_API_KEY: 'k', USER: 'c' };

  it('keeps PATH, HOME, LANG and TZ and adds the manifest env', () => {
    expect(pythonChildEnv(core, { API_URL: 'http://x', RETRIES: 3 })).toEqual({
      env: { PATH: '/usr/bin', HOME: '/home/c', LANG: 'C.UTF-8', TZ: 'UTC', API_URL: 'http://x', RETRIES: '3' },
      ignored: [],
    });
  });

  it('lets the manifest drop an inherited variable, and skips names that are not variable names', () => {
    expect(pythonChildEnv(core, { TZ: null, 'BAD NAME': 'x' })).toEqual({
      env: { PATH: '/usr/bin', HOME: '/home/c', LANG: 'C.UTF-8' },
      ignored: ['BAD NAME: not a valid variable name'],
    });
    expect(pythonChildEnv({}, ['A=1']).ignored).toEqual(['config.env must be a mapping of variable names to values']);
    expect(pythonChildEnv({}, undefined).env).toEqual({ PATH: '/usr/local/bin:/usr/bin:/bin' });
  });
});
