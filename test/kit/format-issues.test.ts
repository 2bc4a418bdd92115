import { describe, expect, it } from 'vitest';
import { formatIssues } from '../../src/kit/format-issues.js';

const issues = [
  { path: '', message: 'payload must be a JSON object' },
  { path: '/capabilities/0/id', message: 'must match pattern' },
];

describe('formatIssues', () => {
  it('joins every problem as "path: message", the whole document shown as "/"', () => {
    expect(formatIssues(issues)).toBe('/: payload must be a JSON object; /capabilities/0/id: must match pattern');
  });

  it('leaves the root path out when asked (replies to the sender of a message)', () => {
    expect(formatIssues(issues, { root: 'omit' })).toBe('payload must be a JSON object; /capabilities/0/id: must match pattern');
  });

  it('gives an empty string for no problems', () => {
    expect(formatIssues([])).toBe('');
  });
});
