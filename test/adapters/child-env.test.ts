// The one builder of child-process environments: what passes from the Core, what the manifest adds.
import { describe, expect, it } from 'vitest';
import { buildChildEnv, manifestEnvOf } from '../../src/adapters/child-env.js';

describe('buildChildEnv', () => {
  const parent = { PATH: '/usr/bin', HOME: '/home/core', LANG: 'de_DE.UTF-8', TZ: 'Europe/Berlin', HOMECLAW_ADMIN_TOKEN: 't', OPENAI_API_KEY: 'k', USER: 'core' };

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
