import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuiltinLoader, type BuiltinLoader } from '../../src/adapters/builtin-loader.js';
import { Dispatcher } from '../../src/dispatch/dispatcher.js';
import { silentLogger } from '../../src/log.js';
import { TypedEventBus } from '../../src/registry/events.js';
import { Registry } from '../../src/registry/registry.js';

/** A fake Open-Meteo: the geocoding and forecast endpoints with the real response shapes. */
let server: Server;
let serviceUrl: string;
const requests: URL[] = [];
let forecastStatus = 200;

let root: string;
let loader: BuiltinLoader;
let dispatcher: Dispatcher;
let registry: Registry;

function closedPortUrl(): Promise<string> {
  const probe = createServer();
  return new Promise((done) =>
    probe.listen(0, '127.0.0.1', () => {
      const port = (probe.address() as AddressInfo).port;
      probe.close(() => done(`http://127.0.0.1:${port}`));
    }),
  );
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    requests.push(url);
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === '/v1/search') {
      if (url.searchParams.get('name') === 'Berlin') {
        return json(200, {
          results: [
            { id: 2950159, name: 'Berlin', latitude: 52.52437, longitude: 13.41053, country: 'Germany', admin1: 'Land Berlin', timezone: 'Europe/Berlin' },
          ],
          generationtime_ms: 0.5,
        });
      }
      return json(200, { generationtime_ms: 0.3 });
    }
    if (url.pathname === '/v1/forecast') {
      if (forecastStatus !== 200) return json(forecastStatus, { error: true, reason: 'Latitude must be in range of -90 to 90°.' });
      if (url.searchParams.has('current')) {
        return json(200, {
          latitude: 52.52,
          longitude: 13.419998,
          timezone: 'Europe/Berlin',
          current_units: {
            time: 'iso8601',
            interval: 'seconds',
            temperature_2m: '°C',
            relative_humidity_2m: '%',
            apparent_temperature: '°C',
            precipitation: 'mm',
            weather_code: 'wmo code',
            wind_speed_10m: 'km/h',
          },
          current: {
            time: '2025-06-03T14:00',
            interval: 900,
            temperature_2m: 21.4,
            relative_humidity_2m: 48,
            apparent_temperature: 20.1,
            precipitation: 0,
            weather_code: 2,
            wind_speed_10m: 11.2,
          },
        });
      }
      const days = Number(url.searchParams.get('forecast_days') ?? 7);
      const dates = ['2025-06-03', '2025-06-04', '2025-06-05', '2025-06-06', '2025-06-07', '2025-06-08', '2025-06-09'].slice(0, days);
      return json(200, {
        timezone: 'Europe/Berlin',
        daily_units: {
          time: 'iso8601',
          weather_code: 'wmo code',
          temperature_2m_max: '°C',
          temperature_2m_min: '°C',
          precipitation_sum: 'mm',
          precipitation_probability_max: '%',
        },
        daily: {
          time: dates,
          weather_code: dates.map((_, i) => [0, 61, 95, 3, 71, 45, 2][i]),
          temperature_2m_max: dates.map((_, i) => 20 + i),
          temperature_2m_min: dates.map((_, i) => 10 + i),
          precipitation_sum: dates.map((_, i) => i),
          precipitation_probability_max: dates.map((_, i) => i * 10),
        },
      });
    }
    return json(404, { error: true, reason: 'not found' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  serviceUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  // A copy of the shipped manifest with a config.yml aimed at the fake; the module re-exports the real one.
  root = mkdtempSync(join(tmpdir(), 'hc-weather-'));
  const folder = join(root, 'plugins', 'weather');
  mkdirSync(folder, { recursive: true });
  copyFileSync(resolve('plugins/weather/plugin.yaml'), join(folder, 'plugin.yaml'));
  writeFileSync(join(folder, 'config.yml'), `base_url: ${serviceUrl}\ngeocoding_url: ${serviceUrl}/\nrequest_timeout_ms: 2000\n`);
  writeFileSync(join(folder, 'index.ts'), `export * from ${JSON.stringify(resolve('plugins/weather/index.ts'))};\n`);
  const unreachable = join(root, 'plugins', 'weather-offline');
  mkdirSync(unreachable);
  writeFileSync(
    join(unreachable, 'plugin.yaml'),
    (await import('node:fs')).readFileSync(resolve('plugins/weather/plugin.yaml'), 'utf8').replace('id: weather', 'id: weather-offline'),
  );
  writeFileSync(join(unreachable, 'config.yml'), `base_url: ${await closedPortUrl()}\ngeocoding_url: ${await closedPortUrl()}\n`);
  writeFileSync(join(unreachable, 'index.ts'), `export * from ${JSON.stringify(resolve('plugins/weather/index.ts'))};\n`);

  registry = new Registry({ db: new Database(':memory:'), events: new TypedEventBus(silentLogger()), log: silentLogger() });
  loader = createBuiltinLoader({
    dir: join(root, 'plugins'),
    data_dir: join(root, 'data'),
    registry,
    log: silentLogger(),
    hot_reload: false,
    compiled_dir: join(root, 'none'),
  });
  await loader.start();
  dispatcher = new Dispatcher({
    registry,
    adapters: [loader.adapter],
    config: { default_timeout_sec: 5, default_max_concurrency: 2, default_queue_limit: 10 },
    log: silentLogger(),
  });
});

afterAll(async () => {
  await dispatcher.stop();
  await loader.stop();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  rmSync(root, { recursive: true, force: true });
});

describe('weather plugin against a fake Open-Meteo', () => {
  it('is registered with its examples and the configured URLs', () => {
    const record = registry.get('weather')!;
    expect(record.state).toBe('online');
    expect(record.descriptor.examples!.length).toBeGreaterThanOrEqual(5);
    expect(record.descriptor.config).toMatchObject({ base_url: serviceUrl });
  });

  it('geocodes the place and reports the current weather', async () => {
    const result = await dispatcher.invoke({ plugin_id: 'weather', capability_id: 'current_weather', parameters: { location: 'Berlin' } });
    expect(result.success).toBe(true);
    expect(result.text).toBe('Berlin, Land Berlin, Germany: partly cloudy, 21.4°C (feels like 20.1°C), humidity 48%, wind 11.2 km/h.');
    expect(result.data).toMatchObject({ temperature: 21.4, conditions: 'partly cloudy', units: { temperature: '°C' } });
    const forecastCall = requests.filter((u) => u.pathname === '/v1/forecast').pop()!;
    expect(forecastCall.searchParams.get('latitude')).toBe('52.52437');
    expect(forecastCall.searchParams.get('longitude')).toBe('13.41053');
  });

  it('accepts "latitude,longitude" without geocoding', async () => {
    const before = requests.filter((u) => u.pathname === '/v1/search').length;
    const result = await dispatcher.invoke({ plugin_id: 'weather', capability_id: 'current_weather', parameters: { location: '48.85, 2.35' } });
    expect(result.success).toBe(true);
    expect(requests.filter((u) => u.pathname === '/v1/search').length).toBe(before);
  });

  it('gives a daily forecast for the requested number of days', async () => {
    const result = await dispatcher.invoke({ plugin_id: 'weather', capability_id: 'forecast', parameters: { location: 'Berlin', days: 3 } });
    expect(result.success).toBe(true);
    expect(result.text).toBe(
      'Forecast for Berlin, Land Berlin, Germany:\n2025-06-03: clear sky, 10–20°C, 0% chance of rain\n2025-06-04: slight rain, 11–21°C, 10% chance of rain\n2025-06-05: thunderstorm, 12–22°C, 20% chance of rain',
    );
    expect((result.data as { days: unknown[] }).days).toHaveLength(3);
  });

  it('says when a place is unknown', async () => {
    const result = await dispatcher.invoke({ plugin_id: 'weather', capability_id: 'current_weather', parameters: { location: 'Atlantis' } });
    expect(result).toMatchObject({ success: false, error: 'no place called "Atlantis" was found' });
  });

  it('passes on an error status of the service with its reason', async () => {
    forecastStatus = 400;
    try {
      const result = await dispatcher.invoke({ plugin_id: 'weather', capability_id: 'forecast', parameters: { location: 'Berlin' } });
      expect(result.success).toBe(false);
      expect(result.error).toBe(`the weather service at ${serviceUrl}/v1/forecast answered HTTP 400: Latitude must be in range of -90 to 90°.`);
    } finally {
      forecastStatus = 200;
    }
  });

  it('gives a clear error when the service cannot be reached', async () => {
    const result = await dispatcher.invoke({ plugin_id: 'weather-offline', capability_id: 'current_weather', parameters: { location: 'Berlin' } });
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/^could not reach the weather service at http:\/\/127\.0\.0\.1:\d+\/v1\/search: ECONNREFUSED$/);
  });
});
