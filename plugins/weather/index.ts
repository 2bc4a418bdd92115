// The built-in "weather" plugin: Open-Meteo geocoding (place name → coordinates) and forecast APIs.
// Network failures become clear error results naming the service URL; nothing here throws.
import type { BuiltinContext, BuiltinReturn } from '../../src/adapters/builtin-module.js';
import type { JsonObject, PluginConfig } from '../../src/protocol/types.js';

const DEFAULT_BASE_URL = 'https://api.open-meteo.com';
const DEFAULT_GEOCODING_URL = 'https://geocoding-api.open-meteo.com';

/** WMO weather interpretation codes, as documented by Open-Meteo. */
const WMO_CODES: Record<number, string> = {
  0: 'clear sky',
  1: 'mainly clear',
  2: 'partly cloudy',
  3: 'overcast',
  45: 'fog',
  48: 'depositing rime fog',
  51: 'light drizzle',
  53: 'moderate drizzle',
  55: 'dense drizzle',
  56: 'light freezing drizzle',
  57: 'dense freezing drizzle',
  61: 'slight rain',
  63: 'moderate rain',
  65: 'heavy rain',
  66: 'light freezing rain',
  67: 'heavy freezing rain',
  71: 'slight snowfall',
  73: 'moderate snowfall',
  75: 'heavy snowfall',
  77: 'snow grains',
  80: 'slight rain showers',
  81: 'moderate rain showers',
  82: 'violent rain showers',
  85: 'slight snow showers',
  86: 'heavy snow showers',
  95: 'thunderstorm',
  96: 'thunderstorm with slight hail',
  99: 'thunderstorm with heavy hail',
};

export function describeWeatherCode(code: unknown): string {
  return typeof code === 'number' ? (WMO_CODES[code] ?? `weather code ${code}`) : 'unknown conditions';
}

interface Place {
  name: string;
  latitude: number;
  longitude: number;
}

/** A failure that already carries the message for the user. */
class WeatherError extends Error {}

function setting(config: PluginConfig, key: string, fallback: string): string {
  const value = config[key];
  return typeof value === 'string' && value.trim() ? value.trim().replace(/\/+$/, '') : fallback;
}

async function getJson(url: URL, ctx: BuiltinContext): Promise<Record<string, unknown>> {
  const timeoutMs = typeof ctx.config.request_timeout_ms === 'number' ? ctx.config.request_timeout_ms : 10_000;
  const service = `${url.origin}${url.pathname}`;
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]), headers: { accept: 'application/json' } });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why = ctx.signal.aborted
      ? 'the call was cancelled'
      : err instanceof Error && err.name === 'TimeoutError'
        ? `no answer within ${timeoutMs} ms`
        : (cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err)));
    throw new WeatherError(`could not reach the weather service at ${service}: ${why}`);
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    throw new WeatherError(`the weather service at ${service} answered HTTP ${response.status} with something that is not JSON: ${text.slice(0, 200)}`);
  }
  if (!response.ok || typeof body !== 'object' || body === null) {
    const reason = typeof (body as { reason?: unknown })?.reason === 'string' ? (body as { reason: string }).reason : text.slice(0, 200);
    throw new WeatherError(`the weather service at ${service} answered HTTP ${response.status}: ${reason}`);
  }
  return body as Record<string, unknown>;
}

async function findPlace(location: string, ctx: BuiltinContext): Promise<Place> {
  const coordinates = /^\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*$/.exec(location);
  if (coordinates) {
    const latitude = Number(coordinates[1]);
    const longitude = Number(coordinates[2]);
    if (Math.abs(latitude) <= 90 && Math.abs(longitude) <= 180) return { name: `${latitude},${longitude}`, latitude, longitude };
  }
  // "Paris, France": the geocoder matches on the place name; the rest is kept for display only.
  const name = location.split(',')[0]!.trim();
  const url = new URL(`${setting(ctx.config, 'geocoding_url', DEFAULT_GEOCODING_URL)}/v1/search`);
  url.searchParams.set('name', name);
  url.searchParams.set('count', '1');
  url.searchParams.set('language', 'en');
  url.searchParams.set('format', 'json');
  const body = await getJson(url, ctx);
  const first = Array.isArray(body.results) ? (body.results[0] as Record<string, unknown> | undefined) : undefined;
  if (!first || typeof first.latitude !== 'number' || typeof first.longitude !== 'number') {
    throw new WeatherError(`no place called "${location}" was found`);
  }
  const label = [first.name, first.admin1, first.country].filter((p): p is string => typeof p === 'string' && p.length > 0);
  return { name: [...new Set(label)].join(', '), latitude: first.latitude, longitude: first.longitude };
}

function forecastUrl(place: Place, ctx: BuiltinContext): URL {
  const url = new URL(`${setting(ctx.config, 'base_url', DEFAULT_BASE_URL)}/v1/forecast`);
  url.searchParams.set('latitude', String(place.latitude));
  url.searchParams.set('longitude', String(place.longitude));
  url.searchParams.set('timezone', 'auto');
  for (const key of ['temperature_unit', 'wind_speed_unit'] as const) {
    const value = ctx.config[key];
    if (typeof value === 'string' && value) url.searchParams.set(key, value);
  }
  return url;
}

function locationOf(params: JsonObject, ctx: BuiltinContext): string | undefined {
  const given = typeof params.location === 'string' ? params.location.trim() : '';
  if (given) return given;
  const fallback = ctx.config.default_parameters?.location;
  return typeof fallback === 'string' && fallback.trim() ? fallback.trim() : undefined;
}

function asFailure(err: unknown): BuiltinReturn {
  if (err instanceof WeatherError) return { success: false, error: err.message };
  throw err;
}

function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

export async function current_weather(params: JsonObject, ctx: BuiltinContext): Promise<BuiltinReturn> {
  const location = locationOf(params, ctx);
  if (!location) return { success: false, error: 'which place? say a city name', ask_user: true, missing_parameters: ['location'] };
  try {
    const place = await findPlace(location, ctx);
    const url = forecastUrl(place, ctx);
    url.searchParams.set('current', 'temperature_2m,relative_humidity_2m,apparent_temperature,precipitation,weather_code,wind_speed_10m');
    const body = await getJson(url, ctx);
    const current = (body.current ?? {}) as Record<string, unknown>;
    const units = (body.current_units ?? {}) as Record<string, unknown>;
    const unit = (key: string): string => (typeof units[key] === 'string' ? (units[key] as string) : '');
    const data = {
      place: place.name,
      time: typeof current.time === 'string' ? current.time : null,
      temperature: num(current.temperature_2m),
      apparent_temperature: num(current.apparent_temperature),
      humidity: num(current.relative_humidity_2m),
      precipitation: num(current.precipitation),
      wind_speed: num(current.wind_speed_10m),
      conditions: describeWeatherCode(current.weather_code),
      units: { temperature: unit('temperature_2m'), precipitation: unit('precipitation'), wind_speed: unit('wind_speed_10m') },
    };
    if (data.temperature === null) return { success: false, error: `the weather service returned no current temperature for ${place.name}` };
    const text =
      `${place.name}: ${data.conditions}, ${data.temperature}${data.units.temperature}` +
      (data.apparent_temperature !== null ? ` (feels like ${data.apparent_temperature}${data.units.temperature})` : '') +
      (data.humidity !== null ? `, humidity ${data.humidity}%` : '') +
      (data.wind_speed !== null ? `, wind ${data.wind_speed} ${data.units.wind_speed}` : '') +
      (data.precipitation ? `, precipitation ${data.precipitation} ${data.units.precipitation}` : '') +
      '.';
    return { text, data };
  } catch (err) {
    return asFailure(err);
  }
}

export async function forecast(params: JsonObject, ctx: BuiltinContext): Promise<BuiltinReturn> {
  const location = locationOf(params, ctx);
  if (!location) return { success: false, error: 'which place? say a city name', ask_user: true, missing_parameters: ['location'] };
  const days = Math.min(7, Math.max(1, typeof params.days === 'number' ? Math.floor(params.days) : 3));
  try {
    const place = await findPlace(location, ctx);
    const url = forecastUrl(place, ctx);
    url.searchParams.set('daily', 'weather_code,temperature_2m_max,temperature_2m_min,precipitation_sum,precipitation_probability_max');
    url.searchParams.set('forecast_days', String(days));
    const body = await getJson(url, ctx);
    const daily = (body.daily ?? {}) as Record<string, unknown>;
    const units = (body.daily_units ?? {}) as Record<string, unknown>;
    const column = (key: string): unknown[] => (Array.isArray(daily[key]) ? (daily[key] as unknown[]) : []);
    const dates = column('time');
    if (dates.length === 0) return { success: false, error: `the weather service returned no forecast for ${place.name}` };
    const rows = dates.slice(0, days).map((date, i) => ({
      date: String(date),
      conditions: describeWeatherCode(column('weather_code')[i]),
      temperature_max: num(column('temperature_2m_max')[i]),
      temperature_min: num(column('temperature_2m_min')[i]),
      precipitation_sum: num(column('precipitation_sum')[i]),
      precipitation_probability_max: num(column('precipitation_probability_max')[i]),
    }));
    const tUnit = typeof units.temperature_2m_max === 'string' ? units.temperature_2m_max : '';
    const lines = rows.map(
      (r) =>
        `${r.date}: ${r.conditions}, ${r.temperature_min ?? '?'}–${r.temperature_max ?? '?'}${tUnit}` +
        (r.precipitation_probability_max !== null ? `, ${r.precipitation_probability_max}% chance of rain` : ''),
    );
    return {
      text: `Forecast for ${place.name}:\n${lines.join('\n')}`,
      data: {
        place: place.name,
        days: rows,
        units: { temperature: tUnit, precipitation: typeof units.precipitation_sum === 'string' ? units.precipitation_sum : '' },
      },
    };
  } catch (err) {
    return asFailure(err);
  }
}
