import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/kit/redact-url.js';

describe('redactUrl', () => {
  it('replaces the password and keeps the rest of the URL', () => {
    expect(redactUrl('mqtt://core:s3cret@broker.lan:1883')).toBe('mqtt://core:***@broker.lan:1883');
  });

  it('hides a password that itself holds "@" or "/"', () => {
    for (const url of ['mqtt://core:p@ss@broker:1883', 'mqtts://core:p%2Fss@broker:8883']) {
      const shown = redactUrl(url);
      expect(shown).not.toMatch(/p@ss|p%2Fss|p\/ss/);
      expect(shown).toContain('***@broker');
    }
  });

  it('leaves a URL without a password as it is', () => {
    expect(redactUrl('mqtt://broker.lan:1883')).toBe('mqtt://broker.lan:1883');
    expect(redactUrl('ws://core@broker.lan:9001')).toBe('ws://core@broker.lan:9001');
  });

  it('shows nothing of a string that is not a URL (a password might sit anywhere in it)', () => {
    expect(redactUrl('core secret@broker')).toBe('(unparsable url)');
    expect(redactUrl('')).toBe('(unparsable url)');
  });
});
