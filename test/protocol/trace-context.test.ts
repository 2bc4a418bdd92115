import { describe, expect, it } from 'vitest';
import { invocationTraceparent, parseTraceparent } from '../../src/protocol/trace-context.js';

const REQUEST_ID = '0af76519-16cd-43dd-8448-eb211c80319c';

describe('W3C traceparent', () => {
  it('reads the example of the W3C recommendation', () => {
    expect(parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).toEqual({
      trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
      parent_id: '00f067aa0ba902b7',
      flags: '01',
    });
  });

  it.each([
    ['version ff', 'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'],
    ['an all-zero trace id', '00-00000000000000000000000000000000-00f067aa0ba902b7-01'],
    ['an all-zero parent id', '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01'],
    ['upper-case hex', '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01'],
    ['a short trace id', '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01'],
    ['extra data after version 00', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra'],
    ['wrong separators', '00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01'],
    ['not a string', 42],
  ])('ignores %s', (_what, value) => {
    expect(parseTraceparent(value)).toBeUndefined();
  });

  it('reads a later version by its first 55 characters', () => {
    expect(parseTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future')).toMatchObject({ trace_id: '4bf92f3577b34da6a3ce929d0e0e4736' });
  });

  it('names a new trace after the request id, with a span id of its own', () => {
    const value = invocationTraceparent(REQUEST_ID);
    expect(value).toBe('00-0af7651916cd43dd8448eb211c80319c-8448eb211c80319c-00');
    expect(parseTraceparent(value)).toBeDefined();
  });

  it("continues a caller's trace with its flags, as a new span", () => {
    const value = invocationTraceparent(REQUEST_ID, '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
    expect(value).toBe('00-4bf92f3577b34da6a3ce929d0e0e4736-8448eb211c80319c-01');
  });

  it("starts a new trace when the caller's value is invalid, and draws random ids for a request id that is no UUID", () => {
    expect(invocationTraceparent(REQUEST_ID, 'garbage')).toBe('00-0af7651916cd43dd8448eb211c80319c-8448eb211c80319c-00');
    const random = parseTraceparent(invocationTraceparent('front-door-1'));
    expect(random?.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(random?.parent_id).toMatch(/^[0-9a-f]{16}$/);
  });
});
