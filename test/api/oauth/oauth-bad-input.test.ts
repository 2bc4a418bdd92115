// Bad input to the OAuth authorization server and /mcp on a real Core: wrong and expired tokens, PKCE
// mismatches, unknown clients, unregistered redirect URIs (an error page, never a redirect), replayed
// codes (refused, and the tokens issued from them revoked), a consent page guessed at, dynamic
// registration when it is off, and a request as Home Assistant's MCP integration makes it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCore, type TestCore } from '../../helpers/core.js';
import { ensureBuilt, SHIPPED_PLUGINS_DIR } from '../../e2e/helpers.js';
import { authorizeUrl, codeOf, consent, hiddenFields, initializeMcp, pkcePair, type OAuthClient, REDIRECT_URI, tokenRequest } from './oauth-helpers.js';

let core: TestCore;
let aliceToken: string;
let client: OAuthClient;
let other: OAuthClient;

async function addClient(name: string, redirect_uris: string[]): Promise<OAuthClient> {
  const res = await core.api<OAuthClient>('POST', '/api/oauth/clients', { name, redirect_uris });
  expect(res.status).toBe(201);
  return res.body;
}

/** A consent for `client` with alice's token; the code and the verifier that goes with it. */
async function freshCode(who: OAuthClient = client): Promise<{ code: string; verifier: string }> {
  const { code_verifier, code_challenge } = await pkcePair();
  const code = codeOf(
    await consent(authorizeUrl(core.httpUrl, { client_id: who.client_id, redirect_uri: REDIRECT_URI, code_challenge, state: 's1' }), aliceToken),
  );
  return { code, verifier: code_verifier };
}

const exchange = (code: string, verifier: string, who: OAuthClient = client, extra: Record<string, string> = {}) =>
  tokenRequest(core.httpUrl, {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT_URI,
    client_id: who.client_id,
    client_secret: who.client_secret,
    ...extra,
  });

beforeAll(async () => {
  await ensureBuilt();
  core = await startTestCore({ pluginsDir: SHIPPED_PLUGINS_DIR });
  aliceToken = core.ctx.users.add('alice').token;
  client = await addClient('main client', [REDIRECT_URI]);
  other = await addClient('other client', ['https://other.example/cb']);
}, 120_000);

afterAll(async () => {
  await core?.cleanup();
});

describe('/mcp tokens', () => {
  it('no token or a wrong one: 401 with the resource metadata pointer (and invalid_token when a token was sent)', async () => {
    const none = await initializeMcp(core.httpUrl);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${core.httpUrl}/.well-known/oauth-protected-resource/mcp", scope="mcp"`);
    for (const wrong of ['nonsense', 'hcoa_not-a-real-access-token', 'hcor_refresh-tokens-are-not-bearer-tokens']) {
      const res = await initializeMcp(core.httpUrl, wrong);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
    }
    // The admin and user tokens keep working on /mcp; OAuth access tokens work nowhere else.
    expect((await initializeMcp(core.httpUrl, aliceToken)).status).toBe(200);
    const { code, verifier } = await freshCode();
    const tokens = await exchange(code, verifier);
    expect(
      (await fetch(`${core.httpUrl}/api/plugins/search?q=time`, { headers: { authorization: `Bearer ${String(tokens.body.access_token)}` } })).status,
    ).toBe(401);
  });

  it('http.public_url names the URLs behind a proxy; a Host header that is not a host falls back to the listener', async () => {
    const proxied = await startTestCore({ overrides: { http: { public_url: 'https://homeclaw.example.com' } } });
    try {
      const res = await initializeMcp(proxied.httpUrl);
      expect(res.headers.get('www-authenticate')).toContain('resource_metadata="https://homeclaw.example.com/.well-known/oauth-protected-resource/mcp"');
      const metadata = (await (await fetch(`${proxied.httpUrl}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
      expect(metadata).toMatchObject({ issuer: 'https://homeclaw.example.com', token_endpoint: 'https://homeclaw.example.com/oauth/token' });
      expect(metadata['registration_endpoint']).toBeUndefined();
    } finally {
      await proxied.cleanup();
    }
  });
});

describe('authorization endpoint', () => {
  it('an unknown client or an unregistered redirect URI: an error page, never a redirect', async () => {
    const { code_challenge } = await pkcePair();
    const unknown = await fetch(authorizeUrl(core.httpUrl, { client_id: 'hcc_nobody', redirect_uri: REDIRECT_URI, code_challenge }), { redirect: 'manual' });
    expect(unknown.status).toBe(400);
    expect(unknown.headers.get('location')).toBeNull();
    expect(unknown.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await unknown.text()).toContain('No OAuth client &quot;hcc_nobody&quot; is registered');
    const evil = 'https://attacker.example/steal';
    const unregistered = await fetch(authorizeUrl(core.httpUrl, { client_id: client.client_id, redirect_uri: evil, code_challenge, state: 'x' }), {
      redirect: 'manual',
    });
    expect(unregistered.status).toBe(400);
    expect(unregistered.headers.get('location')).toBeNull();
    const html = await unregistered.text();
    expect(html).toContain('is not registered for the client');
    expect(html).toContain('Nothing was sent back to the client');
    // The consent POST repeats the check: a tampered hidden field gets the same page.
    const page = await fetch(authorizeUrl(core.httpUrl, { client_id: client.client_id, redirect_uri: REDIRECT_URI, code_challenge }));
    const form = new URLSearchParams({ ...hiddenFields(await page.text()), redirect_uri: evil, token: aliceToken, decision: 'allow' });
    const tampered = await fetch(`${core.httpUrl}/oauth/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
      redirect: 'manual',
    });
    expect(tampered.status).toBe(400);
    expect(tampered.headers.get('location')).toBeNull();
  });

  it('missing or plain PKCE, a bad response type, an unknown scope or resource: back to the client with the error', async () => {
    const { code_challenge } = await pkcePair();
    const cases: [Record<string, string>, string, RegExp][] = [
      [{ client_id: client.client_id, state: 'a' }, 'invalid_request', /code_challenge is required/],
      [{ client_id: client.client_id, code_challenge, code_challenge_method: 'plain', state: 'a' }, 'invalid_request', /S256/],
      [{ client_id: client.client_id, code_challenge, response_type: 'token', state: 'a' }, 'unsupported_response_type', /response_type=code/],
      [{ client_id: client.client_id, code_challenge, scope: 'admin', state: 'a' }, 'invalid_scope', /unknown scope "admin"/],
      [{ client_id: client.client_id, code_challenge, resource: 'https://elsewhere.example/mcp', state: 'a' }, 'invalid_target', /protects only/],
    ];
    for (const [params, error, description] of cases) {
      const res = await fetch(authorizeUrl(core.httpUrl, params), { redirect: 'manual' });
      expect(res.status, JSON.stringify(params)).toBe(302);
      const location = new URL(res.headers.get('location')!);
      expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
      expect(location.searchParams.get('error')).toBe(error);
      expect(location.searchParams.get('error_description')).toMatch(description);
      expect(location.searchParams.get('state')).toBe('a');
    }
  });

  it('a wrong token re-shows the page (401); a user token cannot grant as someone else (403); deny goes back with access_denied', async () => {
    const { code_challenge } = await pkcePair();
    const url = authorizeUrl(core.httpUrl, { client_id: client.client_id, redirect_uri: REDIRECT_URI, code_challenge, state: 'd1' });
    const wrong = await consent(url, 'hcu_wrong-token');
    expect(wrong.status).toBe(401);
    expect(wrong.location).toBeUndefined();
    expect(wrong.html).toContain('That token is not valid');
    const badUser = await consent(url, core.adminToken, { act_as: 'not a user!' });
    expect(badUser.status).toBe(400);
    expect(badUser.html).toContain('is not a user id');
    const impersonate = await consent(url, aliceToken, { act_as: 'bob' });
    expect(impersonate.status).toBe(403);
    expect(impersonate.html).toContain('it can grant access only as &quot;alice&quot;');
    const denied = await consent(url, '', { decision: 'deny' });
    expect(denied.status).toBe(302);
    expect(denied.location?.searchParams.get('error')).toBe('access_denied');
    expect(denied.location?.searchParams.get('state')).toBe('d1');
  });
});

describe('token endpoint', () => {
  it('a PKCE mismatch is refused, and burns the code: the right verifier afterwards gets nothing', async () => {
    const { code, verifier } = await freshCode();
    const { code_verifier: wrongVerifier } = await pkcePair();
    const mismatch = await exchange(code, wrongVerifier);
    expect(mismatch.status).toBe(400);
    expect(mismatch.body).toEqual({ error: 'invalid_grant', error_description: 'code_verifier does not match the code_challenge (PKCE)' });
    expect((await exchange(code, verifier)).body).toMatchObject({ error: 'invalid_grant' });
    const malformed = await exchange((await freshCode()).code, 'short');
    expect(malformed.body).toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining('43 to 128') });
  });

  it('a replayed code is refused and the tokens issued from it are revoked', async () => {
    const { code, verifier } = await freshCode();
    const first = await exchange(code, verifier);
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect((await initializeMcp(core.httpUrl, String(first.body.access_token))).status).toBe(200);
    const replay = await exchange(code, verifier);
    expect(replay.status).toBe(400);
    expect(replay.body).toEqual({
      error: 'invalid_grant',
      error_description: 'the authorization code was already used; the tokens issued from it are revoked',
    });
    expect((await initializeMcp(core.httpUrl, String(first.body.access_token))).status).toBe(401);
    const refresh = await tokenRequest(core.httpUrl, {
      grant_type: 'refresh_token',
      refresh_token: String(first.body.refresh_token),
      client_id: client.client_id,
      client_secret: client.client_secret,
    });
    expect(refresh.body).toMatchObject({ error: 'invalid_grant' });
  });

  it('unknown client or wrong secret: 401 invalid_client (with a Basic challenge when Basic was used)', async () => {
    const { code, verifier } = await freshCode();
    const unknown = await tokenRequest(core.httpUrl, {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      client_id: 'hcc_nobody',
      client_secret: 'x',
    });
    expect(unknown.status).toBe(401);
    expect(unknown.body).toMatchObject({ error: 'invalid_client' });
    const wrongSecret = await exchange(code, verifier, { ...client, client_secret: 'hcs_wrong' });
    expect(wrongSecret.status).toBe(401);
    const basic = await tokenRequest(
      core.httpUrl,
      { grant_type: 'authorization_code', code, code_verifier: verifier },
      { authorization: `Basic ${Buffer.from(`${client.client_id}:nope`).toString('base64')}` },
    );
    expect(basic.status).toBe(401);
    expect(basic.headers.get('www-authenticate')).toBe('Basic realm="homeclaw"');
    // None of these consumed the code.
    expect((await exchange(code, verifier)).status).toBe(200);
  });

  it('a code of another client, a changed redirect URI, an unknown grant type, a foreign resource', async () => {
    const { code, verifier } = await freshCode();
    expect((await exchange(code, verifier, other)).body).toEqual({
      error: 'invalid_grant',
      error_description: 'the authorization code was issued to another client',
    });
    expect((await exchange(code, verifier, client, { redirect_uri: 'http://127.0.0.1:9/elsewhere' })).body).toMatchObject({
      error: 'invalid_grant',
      error_description: expect.stringContaining('redirect_uri'),
    });
    const password = await tokenRequest(core.httpUrl, {
      grant_type: 'password',
      username: 'alice',
      password: 'x',
      client_id: client.client_id,
      client_secret: client.client_secret,
    });
    expect(password.body).toMatchObject({ error: 'unsupported_grant_type' });
    const target = await exchange((await freshCode()).code, verifier, client, { resource: 'https://elsewhere.example/mcp' });
    expect(target.body).toMatchObject({ error: 'invalid_target' });
    const repeated = await fetch(`${core.httpUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=refresh_token&grant_type=authorization_code',
    });
    expect(repeated.status).toBe(400);
    expect(await repeated.json()).toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining('"grant_type" given more than once') });
  });

  it('a refresh token presented by another client ends the grant', async () => {
    const { code, verifier } = await freshCode();
    const tokens = await exchange(code, verifier);
    const stolen = await tokenRequest(core.httpUrl, {
      grant_type: 'refresh_token',
      refresh_token: String(tokens.body.refresh_token),
      client_id: other.client_id,
      client_secret: other.client_secret,
    });
    expect(stolen.body).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('another client') });
    expect((await initializeMcp(core.httpUrl, String(tokens.body.access_token))).status).toBe(401);
  });
});

describe('registration and administration', () => {
  it('dynamic registration is off by default: 403, and the metadata does not offer it', async () => {
    const res = await fetch(`${core.httpUrl}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [REDIRECT_URI] }),
    });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: 'access_denied', error_description: expect.stringContaining('oauth.dynamic_registration') });
  });

  it('bad client input is refused with the reason', async () => {
    for (const [body, message] of [
      [{ name: 'x', redirect_uris: ['javascript:alert(1)'] }, /must be an http\(s\) URL/],
      [{ name: 'x', redirect_uris: ['https://ha.example/cb#frag'] }, /fragment/],
      [{ name: 'x', redirect_uris: [] }, /at least one redirect URI/],
      [{ name: '', redirect_uris: [REDIRECT_URI] }, /client name/],
      [{ name: 'main client', redirect_uris: [REDIRECT_URI] }, /already exists/],
    ] as const) {
      const res = await core.api<{ message: string }>('POST', '/api/oauth/clients', body);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.body.message).toMatch(message);
    }
  });

  it('revoking by user or by client ends those grants; removing a client ends its grants', async () => {
    const { code, verifier } = await freshCode();
    const tokens = await exchange(code, verifier);
    expect((await core.api<{ revoked: number }>('POST', '/api/oauth/tokens/revoke', {})).status).toBe(400);
    const byUser = await core.api<{ revoked: number }>('POST', '/api/oauth/tokens/revoke', { user_id: 'alice' });
    expect(byUser.body.revoked).toBeGreaterThanOrEqual(1);
    expect((await initializeMcp(core.httpUrl, String(tokens.body.access_token))).status).toBe(401);

    const temp = await addClient('temporary', [REDIRECT_URI]);
    const second = await freshCode(temp);
    const tempTokens = await exchange(second.code, second.verifier, temp);
    expect((await initializeMcp(core.httpUrl, String(tempTokens.body.access_token))).status).toBe(200);
    const removed = await core.api<{ grants_revoked: number }>('DELETE', '/api/oauth/clients/temporary');
    expect(removed.body).toMatchObject({ removed: true, grants_revoked: 1 });
    expect((await initializeMcp(core.httpUrl, String(tempTokens.body.access_token))).status).toBe(401);
    expect((await exchange(second.code, second.verifier, temp)).status).toBe(401);
  });
});

describe("as Home Assistant's MCP integration does it", () => {
  it("client_secret_post, HA's extra authorize parameters and long state, a 128-character verifier; refresh replaces the refresh token", async () => {
    const ha = await addClient('Home Assistant', ['https://my.home-assistant.io/redirect/oauth', 'http://homeassistant.local:8123/auth/external/callback']);
    const verifier = 'A'.repeat(20) + 'b-._~'.repeat(20) + 'z'.repeat(8);
    expect(verifier).toHaveLength(128);
    const { createHash } = await import('node:crypto');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const state = `eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9.${'x'.repeat(300)}.sig`;
    const url = authorizeUrl(core.httpUrl, {
      client_id: ha.client_id,
      redirect_uri: 'https://my.home-assistant.io/redirect/oauth',
      state,
      code_challenge: challenge,
      access_type: 'offline',
      prompt: 'consent',
      scope: 'mcp',
    });
    const answer = await consent(url, aliceToken);
    expect(answer.location?.origin + answer.location!.pathname).toBe('https://my.home-assistant.io/redirect/oauth');
    expect(answer.location?.searchParams.get('state')).toBe(state);
    const tokens = await tokenRequest(core.httpUrl, {
      grant_type: 'authorization_code',
      code: codeOf(answer),
      redirect_uri: 'https://my.home-assistant.io/redirect/oauth',
      code_verifier: verifier,
      client_id: ha.client_id,
      client_secret: ha.client_secret,
    });
    expect(tokens.status).toBe(200);
    expect(tokens.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'mcp' });
    const refreshed = await tokenRequest(core.httpUrl, {
      grant_type: 'refresh_token',
      client_id: ha.client_id,
      client_secret: ha.client_secret,
      refresh_token: String(tokens.body.refresh_token),
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(tokens.body.refresh_token);
    expect((await initializeMcp(core.httpUrl, String(refreshed.body.access_token))).status).toBe(200);
  });
});

describe('guessing at the consent page', () => {
  it('after 10 wrong tokens from one address, even the right token is refused with 429 for a while', async () => {
    const guarded = await startTestCore();
    try {
      const token = guarded.ctx.users.add('erin').token;
      const c = await guarded.api<OAuthClient>('POST', '/api/oauth/clients', { name: 'c', redirect_uris: [REDIRECT_URI] });
      const { code_challenge } = await pkcePair();
      const url = authorizeUrl(guarded.httpUrl, { client_id: c.body.client_id, redirect_uri: REDIRECT_URI, code_challenge });
      for (let i = 0; i < 10; i += 1) expect((await consent(url, `wrong-${i}`)).status).toBe(401);
      const blocked = await consent(url, token);
      expect(blocked.status).toBe(429);
      expect(blocked.html).toContain('Too many wrong tokens from this address');
    } finally {
      await guarded.cleanup();
    }
  });
});
