// What /api/plugins/:id shows of a plugin's config: never a secret, whatever its name.
import { describe, expect, it } from 'vitest';
import { redactConfig } from '../../src/api/plugin-views.js';
import type { PluginConfig } from '../../src/protocol/types.js';

const SECRET = 'sk-live-0123456789';

describe('redactConfig', () => {
  it('hides every value of env and headers, which exist to carry keys, whatever they are called', () => {
    const config = {
      command: './run.sh',
      env: { OPENWEATHER_APPID: SECRET, KEY: SECRET, LANG: 'de_DE.UTF-8' },
      headers: { 'X-Auth': SECRET, Cookie: `session=${SECRET}`, Accept: 'application/json' },
    } as unknown as PluginConfig;
    const shown = redactConfig(config);
    expect(JSON.stringify(shown)).not.toContain(SECRET);
    expect(shown).toEqual({
      command: './run.sh',
      env: { OPENWEATHER_APPID: '[redacted]', KEY: '[redacted]', LANG: '[redacted]' },
      headers: { 'X-Auth': '[redacted]', Cookie: '[redacted]', Accept: '[redacted]' },
    });
  });

  it('hides secret-looking keys anywhere, and keeps the rest readable', () => {
    const config = {
      base_url: 'http://lamp.local',
      timeout_sec: 5,
      api_key: SECRET,
      nested: { private_key: SECRET, access_key: SECRET, client_secret: SECRET, db_password: SECRET, refresh_token: SECRET, credentials: SECRET },
      default_parameters: { city: 'Paris' },
    } as unknown as PluginConfig;
    const shown = redactConfig(config);
    expect(JSON.stringify(shown)).not.toContain(SECRET);
    expect(shown).toMatchObject({ base_url: 'http://lamp.local', timeout_sec: 5, default_parameters: { city: 'Paris' } });
  });
});
