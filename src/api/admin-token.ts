// The HTTP API's bearer token: from config/env when given, else generated once and kept in the data
// directory (mode 0600) so CLI commands on the same machine can read it.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function adminTokenPath(dataDir: string): string {
  return join(dataDir, 'admin.token');
}

export function resolveAdminToken(dataDir: string, configured: string | null): { token: string; generated: boolean } {
  if (configured) return { token: configured, generated: false };
  const file = adminTokenPath(dataDir);
  if (existsSync(file)) {
    const token = readFileSync(file, 'utf8').trim();
    if (token.length >= 16) return { token, generated: false };
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const token = randomBytes(32).toString('base64url');
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return { token, generated: true };
}

/** Constant-time comparison of an Authorization header against the token. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  if (!header?.startsWith('Bearer ')) return false;
  const given = Buffer.from(header.slice('Bearer '.length).trim());
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
