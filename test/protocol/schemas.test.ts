import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CAPABILITY_ID_PATTERN, PARAMETER_NAME_PATTERN, RESERVED_PARAMETER_NAMES } from '../../src/protocol/descriptor/name-patterns.js';
import { PLUGIN_ID_PATTERN, REQUEST_ID_PATTERN } from '../../src/protocol/ids.js';
import { findPackageRoot } from '../../src/kit/package-root.js';
import { allProtocolSchemas, descriptorSchema, getSchemaValidator, loadSchemaStore, SCHEMA_NAMES } from '../../src/protocol/schemas.js';
import { PARAMETER_TYPES, PLUGIN_TYPES, SYSTEM_KEYS } from '../../src/protocol/types.js';

const root = findPackageRoot(import.meta.url);
// Inside the package (so walking up finds its package.json) but git-ignored.
const tmpParent = join(root, '.vitest-tmp');
mkdirSync(tmpParent, { recursive: true });

describe('schema store', () => {
  it('finds the package root from src/ and from a dist/src/ path alike', () => {
    expect(root).toBe(findPackageRoot(`file://${join(root, 'src', 'protocol', 'schemas.ts')}`));
    expect(findPackageRoot(`file://${join(root, 'dist', 'src', 'protocol', 'schemas.js')}`)).toBe(root);
  });

  it('loads every schema with an $id and compiles it', () => {
    const all = allProtocolSchemas();
    expect(Object.keys(all).sort()).toEqual([...SCHEMA_NAMES].sort());
    for (const name of SCHEMA_NAMES) {
      expect(all[name]['$id']).toBe(`https://homeclaw-bus.dev/schemas/${name}.schema.json`);
      expect(all[name]['$schema']).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(typeof getSchemaValidator(name)).toBe('function');
    }
  });

  it('hands out copies: changing one does not change validation', () => {
    const schema = descriptorSchema();
    (schema['properties'] as Record<string, unknown>)['id'] = { type: 'number' };
    expect(descriptorSchema()['properties']).toMatchObject({ id: { $ref: 'common.schema.json#/$defs/plugin_id' } });
  });

  it('keeps the TypeScript constants and the schema files in agreement', () => {
    const defs = allProtocolSchemas().common['$defs'] as Record<string, { pattern?: string; enum?: string[]; not?: { enum?: string[] } }>;
    expect(defs['plugin_id']?.pattern).toBe(PLUGIN_ID_PATTERN.source);
    expect(defs['channel_id']?.pattern).toBe(PLUGIN_ID_PATTERN.source);
    expect(defs['request_id']?.pattern).toBe(REQUEST_ID_PATTERN.source);
    expect(defs['capability_id']?.pattern).toBe(CAPABILITY_ID_PATTERN.source);
    expect(defs['parameter_name']?.pattern).toBe(PARAMETER_NAME_PATTERN.source);
    expect(defs['parameter_name']?.not?.enum).toEqual([...RESERVED_PARAMETER_NAMES]);
    // Every member an object inherits is reserved, no more.
    expect([...RESERVED_PARAMETER_NAMES].sort()).toEqual(Object.getOwnPropertyNames(Object.prototype).sort());
    expect(defs['parameter_type']?.enum).toEqual([...PARAMETER_TYPES]);
    expect(defs['plugin_type']?.enum).toEqual([...PLUGIN_TYPES]);
    expect(defs['system_key']?.enum).toEqual([...SYSTEM_KEYS]);
  });

  it('fails loudly when a schema file is missing', () => {
    const empty = mkdtempSync(join(tmpParent, 'schemas-'));
    try {
      expect(() => loadSchemaStore(empty)).toThrow(/protocol schema common is missing/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe('compiled with tsc', () => {
  // Compiled output must find topics/ from its own location (dist/src/protocol/...).
  const outDir = mkdtempSync(join(tmpParent, 'protocol-dist-'));
  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it('validates with the same schema files from a dist-like directory', () => {
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    execFileSync(
      process.execPath,
      [
        tsc,
        '--outDir',
        outDir,
        '--rootDir',
        root,
        '--module',
        'NodeNext',
        '--moduleResolution',
        'NodeNext',
        '--target',
        'ES2022',
        '--strict',
        '--skipLibCheck',
        '--types',
        'node',
        join(root, 'src', 'protocol', 'validate.ts'),
        join(root, 'src', 'protocol', 'descriptor', 'normalize.ts'),
      ],
      { cwd: root, stdio: 'pipe' },
    );
    const script = join(outDir, 'probe.mjs');
    writeFileSync(
      script,
      `import { validatePayload } from './src/protocol/validate.js';
       import { normalizeDescriptor } from './src/protocol/descriptor/normalize.js';
       import { protocolSchemas } from './src/protocol/schemas.js';
       const good = validatePayload('heartbeat', { epoch: 1, seq: 1, ts: 1 });
       const bad = validatePayload('unregister', { plugin_id: 'a/b' });
       const d = normalizeDescriptor({ name: 'bad_calculator', description: 'x', parameters: { a: { type: 'number', required: true } } }, { source: 'external', default_type: 'mqtt' });
       console.log(JSON.stringify({ good: good.ok, bad: bad.ok ? null : bad.errors, dialect: d.ok && d.dialect, dir: protocolSchemas().dir }));`,
    );
    const out = JSON.parse(execFileSync(process.execPath, [script], { encoding: 'utf8' })) as Record<string, unknown>;
    expect(out).toEqual({
      good: true,
      bad: [{ path: '/plugin_id', message: 'must match pattern "^[a-z0-9][a-z0-9_-]{0,63}$"' }],
      dialect: 'ragflow',
      dir: join(root, 'topics', 'schemas'),
    });
  }, 60_000);
});
