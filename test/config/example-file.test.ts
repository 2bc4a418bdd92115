import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { DEFAULT_CONFIG } from '../../src/config/defaults.js';
import { CONFIG_SCHEMA } from '../../src/config/schema.js';

// config/homeclaw.yaml documents every setting with its default; the schema is the source of both, so the
// file must name only keys the schema has, each at the schema's default, and leave out no section key.
const root = resolve(import.meta.dirname, '..', '..');
const example = parseYaml(readFileSync(join(root, 'config', 'homeclaw.yaml'), 'utf8')) as Record<string, unknown>;

type Node = { properties?: Record<string, Node>; default?: unknown };

function isMapping(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Every leaf of the file: a path whose value is not a section of the schema. */
function leaves(value: Record<string, unknown>, schema: Node, path: string[] = []): { path: string[]; value: unknown; schema: Node | undefined }[] {
  return Object.entries(value).flatMap(([key, child]) => {
    const sub = schema.properties?.[key];
    if (sub?.properties && isMapping(child)) return leaves(child, sub, [...path, key]);
    return [{ path: [...path, key], value: child, schema: sub }];
  });
}

/** Every key of the schema that has a default of its own and lies outside a section default. */
function defaultedKeys(schema: Node, path: string[] = []): string[][] {
  return Object.entries(schema.properties ?? {}).flatMap(([key, sub]) =>
    sub.properties ? defaultedKeys(sub, [...path, key]) : sub.default !== undefined ? [[...path, key]] : [],
  );
}

function at(tree: unknown, path: string[]): unknown {
  return path.reduce<unknown>((node, key) => (isMapping(node) ? node[key] : undefined), tree);
}

/** What is wrong with an example file: keys the schema lacks, values off the default, keys left out. */
function problems(file: Record<string, unknown>): { unknown: string[]; drifted: string[]; missing: string[] } {
  const fileLeaves = leaves(file, CONFIG_SCHEMA as unknown as Node);
  const unknown = fileLeaves.filter((leaf) => leaf.schema === undefined).map((leaf) => leaf.path.join('.'));
  const drifted = fileLeaves
    .filter((leaf) => leaf.schema !== undefined && JSON.stringify(leaf.value) !== JSON.stringify(at(DEFAULT_CONFIG, leaf.path)))
    .map((leaf) => `${leaf.path.join('.')}: file ${JSON.stringify(leaf.value)}, schema ${JSON.stringify(at(DEFAULT_CONFIG, leaf.path))}`);
  const inFile = new Set(fileLeaves.map((leaf) => leaf.path.join('.')));
  const missing = defaultedKeys(CONFIG_SCHEMA as unknown as Node)
    .map((p) => p.join('.'))
    .filter((key) => !inFile.has(key));
  return { unknown, drifted, missing };
}

describe('config/homeclaw.yaml, the documented example', () => {
  const found = problems(example);

  it('names only keys the schema has', () => {
    expect(found.unknown).toEqual([]);
  });

  it('gives every key the schema default', () => {
    expect(found.drifted).toEqual([]);
  });

  it('documents every key that has a default', () => {
    expect(found.missing).toEqual([]);
  });

  it('would catch a changed value, an unknown key and a left-out key', () => {
    const copy = structuredClone(example) as Record<string, Record<string, unknown>>;
    copy['http']!['port'] = 1;
    copy['http']!['colour'] = 'blue';
    delete copy['llm']!['temperature'];
    expect(problems(copy)).toEqual({ unknown: ['http.colour'], drifted: ['http.port: file 1, schema 8765'], missing: ['llm.temperature'] });
  });
});
