// What an OAuth client and the person at the consent page do, for tests: an MCP SDK OAuthClientProvider
// that keeps everything in memory, the consent step (GET the page, POST its form with a token, read the
// redirect), and raw token endpoint calls as Home Assistant makes them.
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import pkceChallenge from 'pkce-challenge';

/** The redirect URI of the test clients: never contacted, the consent's redirect is read from Location. */
export const REDIRECT_URI = 'http://127.0.0.1:9/oauth/callback';

export class MemoryOAuthProvider implements OAuthClientProvider {
  authorizationUrl?: URL;
  private info?: OAuthClientInformationMixed;
  private saved?: OAuthTokens;
  private verifier = '';

  constructor(
    private readonly metadata: Partial<OAuthClientMetadata> = {},
    info?: OAuthClientInformationMixed,
  ) {
    this.info = info;
  }

  get redirectUrl(): string {
    return REDIRECT_URI;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'SDK test client',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
      ...this.metadata,
    };
  }

  state(): string {
    return 'state-1234';
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.info;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.info = info;
  }

  tokens(): OAuthTokens | undefined {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }

  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    return this.verifier;
  }
}

export interface ConsentResult {
  status: number;
  /** Location of a redirect, if any. */
  location?: URL;
  /** The page's HTML when there was no redirect. */
  html: string;
}

/** The hidden fields of the consent page's form. */
export function hiddenFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  const unescapeHtml = (text: string): string =>
    text
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[unescapeHtml(match[1]!)] = unescapeHtml(match[2]!);
  return fields;
}

/** A person opens the authorization URL and answers the consent page with a token. */
export async function consent(
  authorizationUrl: URL | string,
  token: string,
  options: { decision?: 'allow' | 'deny'; act_as?: string; ip?: string } = {},
): Promise<ConsentResult> {
  const page = await fetch(authorizationUrl, { redirect: 'manual' });
  const html = await page.text();
  if (page.status !== 200) return { status: page.status, html, ...(page.headers.get('location') ? { location: new URL(page.headers.get('location')!) } : {}) };
  const form = new URLSearchParams({ ...hiddenFields(html), token, decision: options.decision ?? 'allow', act_as: options.act_as ?? '' });
  const answer = await fetch(new URL('/oauth/authorize', authorizationUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form,
    redirect: 'manual',
  });
  const location = answer.headers.get('location');
  return { status: answer.status, html: await answer.text(), ...(location ? { location: new URL(location) } : {}) };
}

/** The code of a successful consent redirect (fails the test otherwise). */
export function codeOf(result: ConsentResult): string {
  const code = result.location?.searchParams.get('code');
  if (result.status !== 302 || !code)
    throw new Error(`consent did not redirect with a code: ${result.status} ${result.location?.href ?? result.html.slice(0, 300)}`);
  return code;
}

export async function tokenRequest(
  baseUrl: string,
  params: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const res = await fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', ...headers },
    body: new URLSearchParams(params),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, headers: res.headers };
}

export async function pkcePair(): Promise<{ code_verifier: string; code_challenge: string }> {
  return pkceChallenge(64);
}

/** An authorization URL as Home Assistant builds it (plus the PKCE challenge). */
export function authorizeUrl(baseUrl: string, params: Record<string, string>): string {
  return `${baseUrl}/oauth/authorize?${new URLSearchParams({ response_type: 'code', code_challenge_method: 'S256', ...params }).toString()}`;
}

/** An MCP initialize request, for raw calls to /mcp. */
export async function initializeMcp(baseUrl: string, bearer?: string): Promise<Response> {
  return fetch(`${baseUrl}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
}

/** A client registered at /oauth/register, as the tests keep it. */
export interface OAuthClient {
  client_id: string;
  client_secret: string;
}
