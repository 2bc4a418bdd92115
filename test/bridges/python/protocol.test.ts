// The Core's side of the host protocol and the child environment, without processes.
import { describe, expect, it } from 'vitest';
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
