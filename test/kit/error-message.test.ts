import { describe, expect, it } from 'vitest';
import { errorMessage, thrownValueMessage } from '../../src/kit/error-message.js';

describe('errorMessage', () => {
  it('gives an Error its message and any other thrown value as a string', () => {
    expect(errorMessage(new TypeError('bad input'))).toBe('bad input');
    expect(errorMessage('plain text')).toBe('plain text');
    expect(errorMessage(42)).toBe('42');
    expect(errorMessage(null)).toBe('null');
    expect(errorMessage(undefined)).toBe('undefined');
  });
});

describe('thrownValueMessage', () => {
  it('never gives an empty reason: an Error without a message is named by its type', () => {
    expect(thrownValueMessage(new RangeError(''))).toBe('RangeError');
    expect(thrownValueMessage(new Error('boom'))).toBe('boom');
  });

  it('shows a thrown object as JSON rather than [object Object]', () => {
    expect(thrownValueMessage({ code: 'E42', detail: 'no' })).toBe('{"code":"E42","detail":"no"}');
    expect(thrownValueMessage('a string')).toBe('a string');
    expect(thrownValueMessage(undefined)).toBe('undefined');
  });
});
