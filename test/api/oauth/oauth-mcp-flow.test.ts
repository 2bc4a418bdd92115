// The whole OAuth flow against /mcp of a real Core, driven by the MCP SDK's client-side OAuth support:
// discovery from the 401, dynamic registration, PKCE, the consent page answered with a user token, the
// code exchange, tools/list scoped by the user's policy and tools/call, refresh with rotation, reuse of a
// replaced refresh token, revocation, expiry and the SDK's automatic refresh after it.
import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { OAuthMetadataSchema, OAuthProtectedResourceMetadataSchema, type OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCore, type TestCore } from '../../helpers/core.js';
import { ensureBuilt, SHIPPED_PLUGINS_DIR } from '../../e2e/helpers.js';
import { codeOf, consent, initializeMcp, MemoryOAuthProvider, REDIRECT_URI, tokenRequest } from './oauth-helpers.js';

const clients: Client[] = [];

async function connect(core: TestCore, provider: MemoryOAuthProvider): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${core.httpUrl}/mcp`), { authProvider: provider });
  const client = new Client({ name: 'oauth-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

/** Runs the SDK flow until it is authorized: connect → 401 → register → consent → finishAuth. */
async function authorize(core: TestCore, provider: MemoryOAuthProvider, token: string, actAs?: string): Promise<void> {
  const transport = new StreamableHTTPClientTransport(new URL(`${core.httpUrl}/mcp`), { authProvider: provider });
  const client = new Client({ name: 'oauth-test', version: '1.0.0' });
  await expect(client.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
  expect(provider.authorizationUrl).toBeDefined();
  const answer = await consent(provider.authorizationUrl!, token, actAs !== undefined ? { act_as: actAs } : {});
  expect(answer.location?.searchParams.get('state')).toBe('state-1234');
  expect(answer.location?.searchParams.get('iss')).toBe(core.httpUrl);
  await transport.finishAuth(codeOf(answer));
  await client.close().catch(() => undefined);
}

describe('OAuth for /mcp with the MCP SDK client', () => {
  let core: TestCore;
  let aliceToken: string;

  beforeAll(async () => {
    await ensureBuilt();
    core = await startTestCore({
      pluginsDir: SHIPPED_PLUGINS_DIR,
      overrides: {
        oauth: { dynamic_registration: true },
        policy: { users: { alice: { allow: ['time', 'weather'] }, bob: { allow: ['notes'] } }, require_confirmation: [] },
      },
    });
    aliceToken = core.ctx.users.add('alice').token;
  }, 120_000);

  afterAll(async () => {
    for (const client of clients.splice(0)) await client.close().catch(() => undefined);
    await core?.cleanup();
  });

  it('discovery: the 401 of /mcp points to the resource metadata, which points to the authorization server', async () => {
    const refused = await initializeMcp(core.httpUrl);
    expect(refused.status).toBe(401);
    const challenge = refused.headers.get('www-authenticate') ?? '';
    expect(challenge).toBe(`Bearer resource_metadata="${core.httpUrl}/.well-known/oauth-protected-resource/mcp", scope="mcp"`);
    const resource = OAuthProtectedResourceMetadataSchema.parse(await (await fetch(`${core.httpUrl}/.well-known/oauth-protected-resource/mcp`)).json());
    expect(resource).toMatchObject({ resource: `${core.httpUrl}/mcp`, authorization_servers: [core.httpUrl], scopes_supported: ['mcp'] });
    const root = await (await fetch(`${core.httpUrl}/.well-known/oauth-protected-resource`)).json();
    expect(root).toEqual(resource);
    const metadata = OAuthMetadataSchema.parse(await (await fetch(`${core.httpUrl}/.well-known/oauth-authorization-server`)).json());
    expect(metadata).toMatchObject({
      issuer: core.httpUrl,
      authorization_endpoint: `${core.httpUrl}/oauth/authorize`,
      token_endpoint: `${core.httpUrl}/oauth/token`,
      registration_endpoint: `${core.httpUrl}/oauth/register`,
      revocation_endpoint: `${core.httpUrl}/oauth/revoke`,
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
    });
    // Clients also probe OpenID discovery: a plain 404, not a 401.
    expect((await fetch(`${core.httpUrl}/.well-known/openid-configuration`)).status).toBe(404);
  });

  it("register, consent with a user token, exchange; tools/list is scoped by the user's policy and tools/call runs as the user", async () => {
    const provider = new MemoryOAuthProvider();
    await authorize(core, provider, aliceToken);
    const info = provider.clientInformation();
    expect(info).toMatchObject({ client_id: expect.stringMatching(/^hcc_/), client_secret: expect.stringMatching(/^hcs_/), client_secret_expires_at: 0 });
    const tokens = provider.tokens()!;
    expect(tokens).toMatchObject({
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'mcp',
      access_token: expect.stringMatching(/^hcoa_/),
      refresh_token: expect.stringMatching(/^hcor_/),
    });

    const { client } = await connect(core, provider);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('time__now');
    expect(names).toContain('weather__forecast');
    expect(names.filter((name) => name.startsWith('buy__') || name.startsWith('notes__'))).toEqual([]);
    const now = await client.callTool({ name: 'time__now', arguments: { timezone: 'UTC' } });
    expect(now.isError).toBeFalsy();
    expect(JSON.stringify(now.content)).toMatch(/in UTC \(UTC\+00:00\)/);
    const denied = await client.callTool({ name: 'buy__place_order', arguments: { item: 'milk', address: 'x', phone: '1', confirmed: true } });
    expect(denied.isError).toBe(true);
    expect(JSON.stringify(denied.content)).toMatch(/not allowed|forbidden/);
    const audit = await core.api<{ entries: { user_id: string; plugin_id: string; outcome: string }[] }>('GET', '/api/audit?plugin=time&limit=1');
    expect(audit.body.entries[0]).toMatchObject({ user_id: 'alice', plugin_id: 'time', outcome: 'ok' });

    const grants = await core.api<{ grants: { client_name: string; acts_as: unknown; approved_by: unknown }[] }>('GET', '/api/oauth/grants');
    expect(grants.body.grants).toContainEqual(
      expect.objectContaining({ client_name: 'SDK test client', acts_as: { kind: 'user', user_id: 'alice' }, approved_by: { kind: 'user', user_id: 'alice' } }),
    );
  });

  it('refresh: the SDK gets new tokens; the replaced refresh token, presented again, ends the whole grant', async () => {
    const provider = new MemoryOAuthProvider();
    await authorize(core, provider, aliceToken);
    const first = provider.tokens()!;
    expect(await auth(provider, { serverUrl: `${core.httpUrl}/mcp` })).toBe('AUTHORIZED');
    const second = provider.tokens()!;
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.access_token).not.toBe(first.access_token);
    expect((await initializeMcp(core.httpUrl, second.access_token)).status).toBe(200);

    const info = provider.clientInformation()!;
    const reuse = await tokenRequest(core.httpUrl, {
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token!,
      client_id: info.client_id,
      client_secret: info.client_secret!,
    });
    expect(reuse.status).toBe(400);
    expect(reuse.body).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('already used') });
    const after = await initializeMcp(core.httpUrl, second.access_token);
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const again = await tokenRequest(core.httpUrl, {
      grant_type: 'refresh_token',
      refresh_token: second.refresh_token!,
      client_id: info.client_id,
      client_secret: info.client_secret!,
    });
    expect(again.body).toMatchObject({ error: 'invalid_grant' });
  });

  it('revocation (RFC 7009): the client revokes its refresh token and its access token stops working', async () => {
    const provider = new MemoryOAuthProvider({ client_name: 'revoking client', token_endpoint_auth_method: 'client_secret_basic' });
    await authorize(core, provider, aliceToken);
    const tokens = provider.tokens()!;
    const info = provider.clientInformation()!;
    expect((await initializeMcp(core.httpUrl, tokens.access_token)).status).toBe(200);
    const basic = `Basic ${Buffer.from(`${info.client_id}:${info.client_secret}`).toString('base64')}`;
    const revoked = await fetch(`${core.httpUrl}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
      body: new URLSearchParams({ token: tokens.refresh_token!, token_type_hint: 'refresh_token' }),
    });
    expect(revoked.status).toBe(200);
    expect((await initializeMcp(core.httpUrl, tokens.access_token)).status).toBe(401);
    // An unknown or already revoked token is answered the same way.
    const twice = await fetch(`${core.httpUrl}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
      body: new URLSearchParams({ token: tokens.refresh_token! }),
    });
    expect(twice.status).toBe(200);
  });

  it('the admin token on the consent page grants as a chosen user, or as the admin', async () => {
    const asBob = new MemoryOAuthProvider({ client_name: 'admin grants bob' });
    await authorize(core, asBob, core.adminToken, 'bob');
    const bob = await connect(core, asBob);
    const bobTools = (await bob.client.listTools()).tools.map((tool) => tool.name);
    expect(bobTools.filter((name) => name.includes('__')).every((name) => name.startsWith('notes__'))).toBe(true);

    const asAdmin = new MemoryOAuthProvider({ client_name: 'admin grants admin' });
    await authorize(core, asAdmin, core.adminToken);
    const admin = await connect(core, asAdmin);
    const adminTools = (await admin.client.listTools()).tools.map((tool) => tool.name);
    expect(adminTools).toEqual(expect.arrayContaining(['time__now', 'buy__place_order', 'notes__save_note']));
  });

  it('a public client (token endpoint auth "none", what Home Assistant picks when offered) relies on PKCE alone', async () => {
    const registered = await fetch(`${core.httpUrl}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      // Home Assistant's registration body (homeassistant/components/mcp/registration.py).
      body: JSON.stringify({
        redirect_uris: ['https://my.home-assistant.io/redirect/oauth'],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        client_name: 'Home Assistant',
        scope: 'mcp',
        application_type: 'web',
      }),
    });
    expect(registered.status).toBe(201);
    const info = (await registered.json()) as Record<string, unknown>;
    expect(info).toMatchObject({
      client_name: 'Home Assistant',
      redirect_uris: ['https://my.home-assistant.io/redirect/oauth'],
      token_endpoint_auth_method: 'none',
      scope: 'mcp',
    });
    expect(info['client_secret']).toBeUndefined();

    const provider = new MemoryOAuthProvider({ client_name: 'public SDK client', token_endpoint_auth_method: 'none' });
    await authorize(core, provider, aliceToken);
    expect(provider.clientInformation()?.client_secret).toBeUndefined();
    const { client } = await connect(core, provider);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('time__now');
    // A secret presented for a public client is wrong, not ignored.
    const refresh = await tokenRequest(core.httpUrl, {
      grant_type: 'refresh_token',
      refresh_token: provider.tokens()!.refresh_token!,
      client_id: provider.clientInformation()!.client_id,
      client_secret: 'guess',
    });
    expect(refresh.status).toBe(401);
  });

  it('registration refuses unusable metadata with the RFC 7591 error', async () => {
    const register = async (body: unknown) => {
      const res = await fetch(`${core.httpUrl}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, string> };
    };
    expect(await register({ redirect_uris: ['javascript:alert(1)'] })).toMatchObject({ status: 400, body: { error: 'invalid_client_metadata' } });
    expect(await register({ redirect_uris: ['com.example.app:/callback'], client_name: 'native app' })).toMatchObject({ status: 201 });
    expect(await register({ redirect_uris: ['ftp://files.example/cb'] })).toMatchObject({ status: 400, body: { error: 'invalid_redirect_uri' } });
    expect(await register({ redirect_uris: [REDIRECT_URI], grant_types: ['client_credentials'] })).toMatchObject({
      status: 400,
      body: { error: 'invalid_client_metadata' },
    });
    expect(await register({ redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'private_key_jwt' })).toMatchObject({
      status: 400,
      body: { error: 'invalid_client_metadata' },
    });
    expect(await register({ redirect_uris: [REDIRECT_URI], scope: 'admin' })).toMatchObject({ status: 400, body: { error: 'invalid_client_metadata' } });
  });

  it('never redirects a bad request of a self-registered client: anyone could register a redirect to any site', async () => {
    // Attack: register a client with an attacker's redirect URI, then send victims to /oauth/authorize
    // with a broken request; the error used to come back as a 302 to that site, from this server's origin.
    const res = await fetch(`${core.httpUrl}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Evil', redirect_uris: ['http://evil.example/cb'], token_endpoint_auth_method: 'none' }),
    });
    const { client_id } = (await res.json()) as { client_id: string };
    const answer = await fetch(`${core.httpUrl}/oauth/authorize?client_id=${client_id}&response_type=code`, { redirect: 'manual' });
    expect(answer.status).toBe(400);
    expect(answer.headers.get('location')).toBeNull();
    expect(await answer.text()).toMatch(/invalid_request: .*code_challenge/);
  });

  it('a grant lives as long as the user token that approved it: rotating it ends the grant', async () => {
    const carolToken = core.ctx.users.add('carol').token;
    const provider = new MemoryOAuthProvider({ client_name: 'carol client' });
    await authorize(core, provider, carolToken);
    const tokens: OAuthTokens = provider.tokens()!;
    expect((await initializeMcp(core.httpUrl, tokens.access_token)).status).toBe(200);
    core.ctx.users.rotate('carol');
    expect((await initializeMcp(core.httpUrl, tokens.access_token)).status).toBe(401);
    const info = provider.clientInformation()!;
    const refresh = await tokenRequest(core.httpUrl, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      client_id: info.client_id,
      client_secret: info.client_secret!,
    });
    expect(refresh.body).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('no longer valid') });
  });
});

describe('expiring access tokens', () => {
  let core: TestCore;

  beforeAll(async () => {
    await ensureBuilt();
    core = await startTestCore({ pluginsDir: SHIPPED_PLUGINS_DIR, overrides: { oauth: { dynamic_registration: true, access_token_ttl_sec: 1 } } });
  }, 120_000);

  afterAll(async () => {
    for (const client of clients.splice(0)) await client.close().catch(() => undefined);
    await core?.cleanup();
  });

  it('an expired access token gets 401 invalid_token; the SDK refreshes on it and the call goes through', async () => {
    const token = core.ctx.users.add('dave').token;
    const provider = new MemoryOAuthProvider();
    await authorize(core, provider, token);
    const first = provider.tokens()!;
    expect(first.expires_in).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const expired = await initializeMcp(core.httpUrl, first.access_token);
    expect(expired.status).toBe(401);
    expect(expired.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const { client } = await connect(core, provider);
    expect(provider.tokens()!.access_token).not.toBe(first.access_token);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('time__now');
  });
});
