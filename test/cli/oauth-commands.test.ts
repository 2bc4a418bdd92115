// `homeclaw oauth ...` run as a user runs it (the built CLI in its own process) against a real Core:
// a client is added with its redirect URI and printed once with its secret, listed, used for a grant,
// its grants listed and revoked by user, and the client removed.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { ensureBuilt, REPO_ROOT } from '../e2e/helpers.js';
import { authorizeUrl, codeOf, consent, initializeMcp, pkcePair, tokenRequest } from '../api/oauth/oauth-helpers.js';

const run = promisify(execFile);
const CLI = join(REPO_ROOT, 'dist', 'src', 'cli.js');
const HA_REDIRECT = 'https://my.home-assistant.io/redirect/oauth';

let core: TestCore;

async function homeclaw(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], {
      env: { ...process.env, HOMECLAW_URL: core.httpUrl, HOMECLAW_ADMIN_TOKEN: core.adminToken },
      timeout: 20_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const failed = err as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

beforeAll(async () => {
  await ensureBuilt();
  core = await startTestCore();
}, 120_000);

afterAll(async () => {
  await core?.cleanup();
});

describe('homeclaw oauth', () => {
  it('clients add prints the id and secret once; list never shows the secret; bad input fails with the reason', async () => {
    const added = await homeclaw('oauth', 'clients', 'add', 'homeassistant', '--redirect-uri', HA_REDIRECT);
    expect(added.code).toBe(0);
    expect(added.stdout).toMatch(
      /^client: homeassistant\nclient id: hcc_\S+\nclient secret: hcs_\S+\nredirect URIs: https:\/\/my\.home-assistant\.io\/redirect\/oauth\n\(the secret is shown only once\)\n$/,
    );
    const listed = await homeclaw('oauth', 'clients', 'list');
    expect(listed.stdout).toContain('homeassistant');
    expect(listed.stdout).toContain(HA_REDIRECT);
    expect(listed.stdout).not.toContain('hcs_');
    const json = JSON.parse((await homeclaw('oauth', 'clients', 'list', '--json')).stdout) as { name: string; client_secret?: string }[];
    expect(json.find((c) => c.name === 'homeassistant')?.client_secret).toBeUndefined();
    const bad = await homeclaw('oauth', 'clients', 'add', 'evil', '--redirect-uri', 'javascript:alert(1)');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('must be an http(s) URL');
    const missing = await homeclaw('oauth', 'clients', 'add', 'nowhere');
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("required option '--redirect-uri <uri>' not specified");
  });

  it('tokens list shows the grant; tokens revoke --user ends it; clients remove ends the client', async () => {
    const added = JSON.parse(
      (await homeclaw('oauth', 'clients', 'add', 'inspector', '--redirect-uri', 'http://127.0.0.1:6274/oauth/callback', '--json')).stdout,
    ) as { client_id: string; client_secret: string };
    const alice = core.ctx.users.add('alice').token;
    const { code_verifier, code_challenge } = await pkcePair();
    const code = codeOf(
      await consent(authorizeUrl(core.httpUrl, { client_id: added.client_id, redirect_uri: 'http://127.0.0.1:6274/oauth/callback', code_challenge }), alice),
    );
    const tokens = await tokenRequest(core.httpUrl, {
      grant_type: 'authorization_code',
      code,
      code_verifier,
      redirect_uri: 'http://127.0.0.1:6274/oauth/callback',
      client_id: added.client_id,
      client_secret: added.client_secret,
    });
    expect(tokens.status).toBe(200);

    const grants = await homeclaw('oauth', 'tokens', 'list');
    expect(grants.stdout).toMatch(/^CLIENT\s+ACTS AS\s+APPROVED BY\s+CREATED\s+LAST USED\s+EXPIRES\ninspector\s+alice\s+alice\s/);
    expect((await homeclaw('oauth', 'tokens', 'revoke')).code).toBe(2);
    const revoked = await homeclaw('oauth', 'tokens', 'revoke', '--user', 'alice');
    expect(revoked.stdout.trim()).toBe('ended 1 grant');
    expect((await initializeMcp(core.httpUrl, String(tokens.body.access_token))).status).toBe(401);
    expect((await homeclaw('oauth', 'tokens', 'list')).stdout.trim()).toBe('no OAuth grants');

    expect((await homeclaw('oauth', 'clients', 'remove', 'inspector')).stdout.trim()).toBe(`removed ${added.client_id}; ended 0 grants`);
    const again = await homeclaw('oauth', 'clients', 'remove', 'inspector');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('no OAuth client "inspector"');
  });
});
