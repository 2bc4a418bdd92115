// The one builder of child-process environments: what passes from the Core, what the manifest adds.
import { describe, expect, it } from 'vitest';
import { buildChildEnv, buildChildEnvReport, manifestEnvOf } from '../../src/adapters/child-env.js';

describe('buildChildEnv', () => {
  const parent = {
    PATH: '/usr/bin',
    HOME: '/home/core',
    LANG: 'de_DE.UTF-8',
    TZ: 'Europe/Berlin',
    HOMECLAW_ADMIN_TOKEN: 't',
    OPENAI_API_KEY: 'k',
    USER: 'core',
  };

  it('passes only PATH, HOME, LANG and TZ from the parent', () => {
    expect(buildChildEnv(undefined, parent)).toEqual({ PATH: '/usr/bin', HOME: '/home/core', LANG: 'de_DE.UTF-8', TZ: 'Europe/Berlin' });
  });

  it('adds the manifest env, which may override or unset an inherited variable', () => {
    const env = buildChildEnv({ LANG: 'C.UTF-8', TZ: null, PORT: 8080, DEBUG: true, OPTIONS: { a: 1 }, TOKEN: 'explicit' }, parent);
    expect(env).toEqual({ PATH: '/usr/bin', HOME: '/home/core', LANG: 'C.UTF-8', PORT: '8080', DEBUG: 'true', OPTIONS: '{"a":1}', TOKEN: 'explicit' });
  });

  it('skips variables the parent does not have', () => {
    expect(buildChildEnv({}, { PATH: '/bin' })).toEqual({ PATH: '/bin' });
  });

  it('reads config.env only when it is an object', () => {
    expect(manifestEnvOf({ A: '1' })).toEqual({ A: '1' });
    expect(manifestEnvOf(['A'])).toBeUndefined();
    expect(manifestEnvOf('A=1')).toBeUndefined();
    expect(manifestEnvOf(undefined)).toBeUndefined();
  });
});

describe('buildChildEnvReport', () => {
  const core = { PATH: '/usr/bin', HOME: '/home/c', LANG: 'C.UTF-8', TZ: 'UTC', HOMECLAW_ADMIN_TOKEN: 't', OPENAI_API_KEY: 'k', USER: 'c' };

  it('keeps PATH, HOME, LANG and TZ and adds the manifest env', () => {
    expect(buildChildEnvReport({ API_URL: 'http://x', RETRIES: 3 }, core)).toEqual({
      env: { PATH: '/usr/bin', HOME: '/home/c', LANG: 'C.UTF-8', TZ: 'UTC', API_URL: 'http://x', RETRIES: '3' },
      ignored: [],
    });
  });

  it('lets the manifest drop an inherited variable, skips names that are not variable names, and always has a PATH', () => {
    expect(buildChildEnvReport({ TZ: null, 'BAD NAME': 'x' }, core)).toEqual({
      env: { PATH: '/usr/bin', HOME: '/home/c', LANG: 'C.UTF-8' },
      ignored: ['BAD NAME: not a valid variable name'],
    });
    expect(buildChildEnvReport(['A=1'], {}).ignored).toEqual(['config.env must be a mapping of variable names to values']);
    expect(buildChildEnvReport(undefined, {}).env).toEqual({ PATH: '/usr/local/bin:/usr/bin:/bin' });
  });
});
