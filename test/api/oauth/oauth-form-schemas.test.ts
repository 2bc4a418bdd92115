// The OAuth endpoints check their parameters against the schemas the OpenAPI document shows: a missing
// or malformed parameter gets invalid_request naming it (unsupported_grant_type / unsupported_response_type
// where RFC 6749 says so), unknown parameters are ignored, and the document's forms are those schemas.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthorizationCodeGrant, AuthorizationRequest, ConsentForm, RevocationRequest, TokenRequest } from '../../../src/api/oauth/form-schemas.js';
import { ensureBuilt, SHIPPED_PLUGINS_DIR } from '../../e2e/helpers.js';
import { startTestCore, type TestCore } from '../../helpers/core.js';
import { authorizeUrl, codeOf, consent, hiddenFields, pkcePair, type OAuthClient, REDIRECT_URI, tokenRequest } from './oauth-helpers.js';

let core: TestCore;
let aliceToken: string;
let client: OAuthClient;

beforeAll(async () => {
  await ensureBuilt();
  core = await startTestCore({ pluginsDir: SHIPPED_PLUGINS_DIR });
  aliceToken = core.ctx.users.add('alice').token;
  const added = await core.api<OAuthClient>('POST', '/api/oauth/clients', { name: 'form client', redirect_uris: [REDIRECT_URI] });
  expect(added.status).toBe(201);
  client = added.body;
}, 120_000);

afterAll(async () => {
  await core?.cleanup();
});

const auth = () => ({ client_id: client.client_id, client_secret: client.client_secret });
const json = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

describe('OAuth parameters checked by their schemas', () => {
  it('token endpoint: each grant names its missing or malformed parameters; nothing is issued', async () => {
    const cases: [Record<string, string>, string, RegExp][] = [
      [{ grant_type: 'authorization_code', code_verifier: 'v'.repeat(43) }, 'invalid_request', /^code is required$/],
      [{ grant_type: 'authorization_code', code: 'abc' }, 'invalid_request', /^code_verifier is required$/],
      [{ grant_type: 'authorization_code', code: 'abc', code_verifier: 'short' }, 'invalid_request', /^code_verifier must match/],
      [{ grant_type: 'refresh_token' }, 'invalid_request', /^refresh_token is required$/],
      [{ grant_type: 'refresh_token', refresh_token: '' }, 'invalid_request', /^refresh_token must be a non-empty string$/],
      [{}, 'invalid_request', /^grant_type is required$/],
      [{ grant_type: 'client_credentials' }, 'unsupported_grant_type', /authorization_code, refresh_token/],
    ];
    for (const [params, error, description] of cases) {
      const answer = await tokenRequest(core.httpUrl, { ...params, ...auth() });
      expect(answer.status, JSON.stringify(params)).toBe(400);
      expect(answer.body['error']).toBe(error);
      expect(String(answer.body['error_description'])).toMatch(description);
      expect(answer.body['access_token']).toBeUndefined();
    }
  });

  it('token endpoint: parameters it does not know are ignored, and a complete request still gets its tokens', async () => {
    const { code_verifier, code_challenge } = await pkcePair();
    const code = codeOf(
      await consent(authorizeUrl(core.httpUrl, { client_id: client.client_id, redirect_uri: REDIRECT_URI, code_challenge, state: 'x' }), aliceToken),
    );
    const answer = await tokenRequest(core.httpUrl, {
      grant_type: 'authorization_code',
      code,
      code_verifier,
      redirect_uri: REDIRECT_URI,
      some_extension: 'ignored',
      ...auth(),
    });
    expect(answer.status).toBe(200);
    expect(typeof answer.body['access_token']).toBe('string');
  });

  it('revocation needs a token', async () => {
    const res = await fetch(`${core.httpUrl}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token_type_hint: 'refresh_token', ...auth() }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'invalid_request', error_description: 'token is required' });
  });

  it('authorization: a malformed challenge goes back to the client as invalid_request naming it', async () => {
    const res = await fetch(authorizeUrl(core.httpUrl, { client_id: client.client_id, code_challenge: 'too-short', state: 's' }), { redirect: 'manual' });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toMatch(/^code_challenge must match/);
  });

  it('consent form: a decision other than allow or deny is a bad request, and no code is issued', async () => {
    const { code_challenge } = await pkcePair();
    const page = await fetch(authorizeUrl(core.httpUrl, { client_id: client.client_id, code_challenge, state: 'c' }));
    expect(page.status).toBe(200);
    const answer = await fetch(`${core.httpUrl}/oauth/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...hiddenFields(await page.text()), token: aliceToken, decision: 'maybe' }),
      redirect: 'manual',
    });
    expect(answer.status).toBe(400);
    expect(answer.headers.get('location')).toBeNull();
    expect(await answer.text()).toContain('decision must be');
  });

  it('the OpenAPI document shows exactly the schemas the endpoints check', async () => {
    const doc = (await core.api<{ paths: Record<string, Record<string, Record<string, unknown>>> }>('GET', '/api/openapi.json')).body;
    const formOf = (path: string, method: string) => {
      const body = doc.paths[path]?.[method]?.['requestBody'] as { content: Record<string, { schema: unknown }> } | undefined;
      return body?.content['application/x-www-form-urlencoded']?.schema;
    };
    expect(formOf('/oauth/token', 'post')).toEqual(json(TokenRequest));
    expect(formOf('/oauth/revoke', 'post')).toEqual(json(RevocationRequest));
    expect(formOf('/oauth/authorize', 'post')).toEqual(json(ConsentForm));
    const parameters = doc.paths['/oauth/authorize']?.['get']?.['parameters'] as { name: string; in: string; required: boolean; schema: unknown }[];
    expect(parameters.map((p) => p.name).sort()).toEqual(Object.keys(AuthorizationRequest.properties).sort());
    const challenge = AuthorizationRequest.properties.code_challenge;
    expect(parameters.find((p) => p.name === 'code_challenge')).toMatchObject({
      in: 'query',
      required: true,
      description: challenge.description,
      schema: { type: 'string', pattern: challenge.pattern },
    });
    expect(parameters.find((p) => p.name === 'state')).toMatchObject({ required: false });
    expect(json(TokenRequest)).toMatchObject({ anyOf: [json(AuthorizationCodeGrant), expect.anything()] });
  });
});
