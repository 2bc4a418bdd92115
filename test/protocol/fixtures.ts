// Seed examples as files, read the way the Core reads plugin manifests and registration bodies.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';

export const FIXTURES_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'protocol');

export function fixture(name: string): Record<string, unknown> {
  const text = readFileSync(join(FIXTURES_DIR, name), 'utf8');
  return (name.endsWith('.json') ? JSON.parse(text) : parseYaml(text)) as Record<string, unknown>;
}
