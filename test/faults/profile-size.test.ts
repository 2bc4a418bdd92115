// Attack (growing the database through one's own profile). A profile had no bound: a user token sent
// three requests of 1,300 keys × 3 KB each, every one accepted, and the database grew by 22 MB, without
// end. Defence: a profile holds at most 200 keys and 64 KiB of JSON; a request that would go over is
// refused with 400 naming the limit, and the profile stays as it was.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROFILE_LIMITS } from '../../src/api/routes/profiles-schema.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { makePluginsDir } from '../e2e/helpers.js';
import { callApi } from './identity-helpers.js';

let core: TestCore;
let token: string;

const keys = (count: number, prefix = 'k', value = 'v'): Record<string, string> =>
  Object.fromEntries(Array.from({ length: count }, (_, i) => [`${prefix}${i}`, value]));
const profile = async (): Promise<Record<string, unknown>> =>
  (await callApi<{ profile: Record<string, unknown> }>(core.httpUrl, token, 'GET', '/api/profiles/alice')).body.profile;

beforeAll(async () => {
  core = await startTestCore({ pluginsDir: makePluginsDir({ shipped: [] }) });
  token = (await core.api<{ token: string }>('POST', '/api/users', { user_id: 'alice' })).body.token;
}, 120_000);

afterAll(async () => {
  await core?.cleanup();
});

describe('the size of a profile', () => {
  it(`refuses more than ${PROFILE_LIMITS.keys} keys, whether sent at once or added to what is there`, async () => {
    const tooMany = await callApi(core.httpUrl, token, 'POST', '/api/profiles/alice', { set: keys(PROFILE_LIMITS.keys + 1) });
    expect(tooMany.status).toBe(400);
    expect(String(tooMany.body['message'])).toBe(`the profile would hold ${PROFILE_LIMITS.keys + 1} keys; a profile holds at most ${PROFILE_LIMITS.keys}`);
    expect(await profile()).toEqual({});

    expect((await callApi(core.httpUrl, token, 'POST', '/api/profiles/alice', { set: keys(PROFILE_LIMITS.keys) })).status).toBe(200);
    expect((await callApi(core.httpUrl, token, 'POST', '/api/profiles/alice', { set: { city: 'Oslo' } })).status).toBe(400);
    // Making room in the same request is fine.
    expect((await callApi(core.httpUrl, token, 'POST', '/api/profiles/alice', { set: { city: 'Oslo' }, unset: ['k0'] })).status).toBe(200);
    expect(Object.keys(await profile())).toHaveLength(PROFILE_LIMITS.keys);
  });

  it(`refuses more than ${PROFILE_LIMITS.bytes} bytes of JSON, and PUT is held to the same limits`, async () => {
    const before = await profile();
    const big = await callApi(core.httpUrl, token, 'PUT', '/api/profiles/alice', { profile: { notes: 'x'.repeat(PROFILE_LIMITS.bytes) } });
    expect(big.status).toBe(400);
    expect(String(big.body['message'])).toMatch(new RegExp(`^the profile would be \\d+ bytes of JSON; a profile holds at most ${PROFILE_LIMITS.bytes}$`));
    expect(await profile()).toEqual(before);
    expect((await callApi(core.httpUrl, token, 'PUT', '/api/profiles/alice', { profile: { city: 'Oslo', notes: 'x'.repeat(1000) } })).status).toBe(200);
    expect(await profile()).toEqual({ city: 'Oslo', notes: 'x'.repeat(1000) });
  });
});
