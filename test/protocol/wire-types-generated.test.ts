import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateWireTypes, WIRE_TYPES_FILE } from '../../scripts/gen-wire-types.js';

const root = resolve(import.meta.dirname, '..', '..');

describe('wire types generated from topics/schemas', () => {
  it('are committed exactly as `npm run gen:types` produces them from the schemas', async () => {
    const committed = readFileSync(join(root, WIRE_TYPES_FILE), 'utf8');
    const generated = await generateWireTypes(root);
    // On a difference: run `npm run gen:types` and commit src/protocol/wire-types.generated.ts.
    expect(committed).toBe(generated);
  });

  it('follow a change of a schema', async () => {
    const copy = mkdtempSync(join(tmpdir(), 'homeclaw-wire-types-'));
    cpSync(join(root, 'topics', 'schemas'), join(copy, 'topics', 'schemas'), { recursive: true });
    const file = join(copy, 'topics', 'schemas', 'plugin-result.schema.json');
    const schema = JSON.parse(readFileSync(file, 'utf8')) as { properties: Record<string, unknown>; required: string[] };
    schema.properties.attempt = { type: 'integer', description: 'Which try this was.' };
    schema.required.push('attempt');
    writeFileSync(file, JSON.stringify(schema));
    const generated = await generateWireTypes(copy);
    expect(generated).toMatch(/export interface PluginResult \{[\s\S]*?Which try this was\.[\s\S]*?attempt: number;/);
    expect(generated).not.toBe(await generateWireTypes(root));
  });
});
