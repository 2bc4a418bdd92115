// Who may take over a plugin id: only a plugin credential listing the id, and only from an anonymous owner.
import { describe, expect, it } from 'vitest';
import { credentialOwner, isAnonymousOwner, mayClaimPluginId } from '../../src/access/plugin-claims.js';
import { accessMode } from '../../src/access/security-status.js';

const weather = { clientId: 'w', username: 'weather', role: 'plugin', pluginIds: ['pyweather'] };

describe('mayClaimPluginId', () => {
  it('lets a plugin credential that lists the id claim it from an anonymous owner', () => {
    expect(mayClaimPluginId('mqtt:client:pyweather-dev', weather, 'pyweather')).toBe(true);
  });

  it('refuses every other case', () => {
    expect(mayClaimPluginId('mqtt:client:pyweather-dev', weather, 'other')).toBe(false);
    expect(mayClaimPluginId('mqtt:user:someone', weather, 'pyweather')).toBe(false);
    expect(mayClaimPluginId('builtin', weather, 'pyweather')).toBe(false);
    expect(mayClaimPluginId('api', weather, 'pyweather')).toBe(false);
    expect(mayClaimPluginId('mqtt:external', weather, 'pyweather')).toBe(false);
    expect(mayClaimPluginId('mqtt:client:x', { ...weather, role: 'admin' }, 'pyweather')).toBe(false);
    expect(mayClaimPluginId('mqtt:client:x', { clientId: 'anon', pluginIds: ['pyweather'] }, 'pyweather')).toBe(false);
    expect(mayClaimPluginId('mqtt:client:x', undefined, 'pyweather')).toBe(false);
  });

  it('owner strings', () => {
    expect(credentialOwner('weather')).toBe('mqtt:user:weather');
    expect(isAnonymousOwner('mqtt:client:abc')).toBe(true);
    expect(isAnonymousOwner('mqtt:user:abc')).toBe(false);
  });
});

describe('accessMode', () => {
  it('names the situation plainly', () => {
    expect(accessMode(null)).toBe('external-broker');
    expect(accessMode({ anonymous: true, loopbackOnly: true })).toBe('anonymous-loopback');
    expect(accessMode({ anonymous: true, loopbackOnly: false })).toBe('anonymous-lan');
    expect(accessMode({ anonymous: false, loopbackOnly: true })).toBe('credentials');
  });
});
