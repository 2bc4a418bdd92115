// User profiles (name, address, phone, ...) in SQLite, one row per key so `profile set` changes one value
// without rewriting the others. The resolver reads them through a parameter's profile_key.
import { readFile } from 'node:fs/promises';
import type Database from 'better-sqlite3';
import { parse as parseYaml } from 'yaml';
import type { JsonValue } from '../protocol/types.js';
import type { Profile, ProfileStore } from './resolver-api.js';
import { isPlainObject } from '../kit/plain-object.js';

export interface SqliteProfileStoreOptions {
  db: Database.Database;
  now?: () => number;
}

interface Row {
  key: string;
  value_json: string;
}

export class SqliteProfileStore implements ProfileStore {
  private readonly db: Database.Database;
  private readonly now: () => number;
  private readonly selectStatement: Database.Statement<[string], Row>;
  private readonly upsertStatement: Database.Statement<[string, string, string, number]>;
  private readonly deleteStatement: Database.Statement<[string, string]>;
  private readonly usersStatement: Database.Statement<[], { user_id: string }>;

  constructor(options: SqliteProfileStoreOptions) {
    this.db = options.db;
    this.now = options.now ?? Date.now;
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS profiles (
        user_id TEXT NOT NULL,
        key TEXT NOT NULL,
        value_json TEXT NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (user_id, key)
      );
    `);
    this.selectStatement = this.db.prepare('SELECT key, value_json FROM profiles WHERE user_id = ? ORDER BY key');
    this.upsertStatement = this.db.prepare(
      `INSERT INTO profiles (user_id, key, value_json, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (user_id, key) DO UPDATE SET value_json = excluded.value_json, updated_at = excluded.updated_at`,
    );
    this.deleteStatement = this.db.prepare('DELETE FROM profiles WHERE user_id = ? AND key = ?');
    this.usersStatement = this.db.prepare('SELECT DISTINCT user_id FROM profiles ORDER BY user_id');
  }

  get(userId: string): Profile {
    const profile: Profile = {};
    for (const row of this.selectStatement.all(userId)) {
      try {
        profile[row.key] = JSON.parse(row.value_json) as JsonValue;
      } catch {
        // A damaged value is skipped: a missing profile value is asked for, a garbled one would be sent.
      }
    }
    return profile;
  }

  /** Merges the given keys into the profile; other keys are kept. */
  set(userId: string, values: Profile): void {
    const at = this.now();
    const write = this.db.transaction((entries: [string, JsonValue][]) => {
      for (const [key, value] of entries) this.upsertStatement.run(userId, key, JSON.stringify(value), at);
    });
    write(Object.entries(values));
  }

  /** The whole profile becomes exactly these values, in one transaction. */
  replace(userId: string, values: Profile): void {
    const at = this.now();
    const write = this.db.transaction((entries: [string, JsonValue][]) => {
      this.db.prepare('DELETE FROM profiles WHERE user_id = ?').run(userId);
      for (const [key, value] of entries) this.upsertStatement.run(userId, key, JSON.stringify(value), at);
    });
    write(Object.entries(values));
  }

  unset(userId: string, keys: string[]): Profile {
    const remove = this.db.transaction((names: string[]) => {
      for (const key of names) this.deleteStatement.run(userId, key);
    });
    remove(keys);
    return this.get(userId);
  }

  /** Every user with at least one profile value. */
  users(): string[] {
    return this.usersStatement.all().map((row) => row.user_id);
  }
}

export interface SeedOptions {
  /** When false (default) values already in the store win: the file seeds, `profile set` edits stick. */
  overwrite?: boolean;
}

export interface SeedSummary {
  users: number;
  keys_set: number;
}

function isJsonValue(value: unknown): value is JsonValue {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isJsonValue);
  if (isPlainObject(value)) return Object.values(value).every(isJsonValue);
  return false;
}

/** Parses the profiles file format: `users: { <user_id>: { <key>: <value>, ... } }`. Throws with the offending path. */
export function parseProfilesYaml(text: string, origin = 'profiles file'): Map<string, Profile> {
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (error) {
    throw new Error(`${origin}: not valid YAML: ${(error as Error).message}`);
  }
  const profiles = new Map<string, Profile>();
  if (document === null || document === undefined) return profiles;
  if (!isPlainObject(document)) throw new Error(`${origin}: expected a mapping with a "users" key`);
  const users = document.users;
  if (users === null || users === undefined) return profiles;
  if (!isPlainObject(users)) throw new Error(`${origin}: "users" must be a mapping of user id to profile`);
  for (const [userId, profile] of Object.entries(users)) {
    if (userId.trim() === '') throw new Error(`${origin}: users: empty user id`);
    if (profile === null) continue;
    if (!isPlainObject(profile)) throw new Error(`${origin}: users.${userId} must be a mapping of key to value`);
    const values: Profile = {};
    for (const [key, value] of Object.entries(profile)) {
      if (!isJsonValue(value)) throw new Error(`${origin}: users.${userId}.${key} is not a plain value`);
      values[key] = value;
    }
    profiles.set(userId, values);
  }
  return profiles;
}

/** Seeds profiles from a YAML file (config/profiles.yaml format). */
export async function seedProfiles(store: ProfileStore, yamlFile: string, options: SeedOptions = {}): Promise<SeedSummary> {
  const text = await readFile(yamlFile, 'utf8');
  const profiles = parseProfilesYaml(text, yamlFile);
  let keysSet = 0;
  for (const [userId, values] of profiles) {
    const existing = options.overwrite ? {} : store.get(userId);
    const fresh: Profile = {};
    for (const [key, value] of Object.entries(values)) {
      if (Object.hasOwn(existing, key)) continue;
      fresh[key] = value;
    }
    if (Object.keys(fresh).length > 0) store.set(userId, fresh);
    keysSet += Object.keys(fresh).length;
  }
  return { users: profiles.size, keys_set: keysSet };
}

export type ParsedAssignments = { ok: true; values: Profile } | { ok: false; error: string };

/**
 * Parses `key=value` arguments (as typed after `homeclaw profile set <user>`). Values stay text: a phone
 * number like 0555 must not turn into 555.
 */
export function parseProfileAssignments(args: string[]): ParsedAssignments {
  const values: Profile = {};
  for (const arg of args) {
    const at = arg.indexOf('=');
    const key = at > 0 ? arg.slice(0, at).trim() : '';
    if (key === '') return { ok: false, error: `expected key=value, got "${arg}"` };
    values[key] = arg.slice(at + 1).trim();
  }
  if (Object.keys(values).length === 0) return { ok: false, error: 'give at least one key=value' };
  return { ok: true, values };
}
