// The product's version, read once from package.json: what `homeclaw --version`, /api/status, the
// OpenAPI document, the MCP server and client, and Home Assistant discovery report. One source, so a
// release changes one line.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { findPackageRoot } from './package-root.js';

let cached: string | undefined;

/** The "version" field of this package's package.json. */
export function packageVersion(): string {
  if (cached === undefined) {
    const manifest: unknown = JSON.parse(readFileSync(join(findPackageRoot(), 'package.json'), 'utf8'));
    const version = typeof manifest === 'object' && manifest !== null ? (manifest as { version?: unknown }).version : undefined;
    if (typeof version !== 'string' || version === '') throw new Error('package.json has no "version"');
    cached = version;
  }
  return cached;
}
