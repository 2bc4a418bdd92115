// Helpers for end-to-end tests on the real Core: an up-to-date build (the built-in plugin modules and the
// CLI run from dist/), temporary plugin folders (copies of shipped built-ins with their own config.yml,
// and small test built-ins written as plain JS), and a channel user speaking over the MQTT topics.
import { randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { topics } from '../../src/protocol/topics.js';
import type { ChannelMessageOut } from '../../src/protocol/types.js';
import type { TestClient } from '../helpers/mqtt-client.js';
export { ensureBuilt } from '../helpers/build.js';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const SHIPPED_PLUGINS_DIR = join(REPO_ROOT, 'plugins');

export interface TestBuiltin {
  /** Folder name = plugin id. */
  id: string;
  /** plugin.yaml text. */
  manifest: string;
  /** index.js text (ESM). */
  module: string;
  config?: string;
}

export interface PluginsDirOptions {
  /** Shipped built-ins to copy, each with an optional config.yml replacing the shipped one. */
  shipped?: { id: string; config?: string }[];
  builtins?: TestBuiltin[];
}

/**
 * A temporary plugins folder. Shipped built-ins get their plugin.yaml, a config.yml and an index.js that
 * re-exports the compiled module from dist/ (the loader looks for a compiled module next to the folder's
 * parent, which a temp folder does not have).
 */
export function makePluginsDir(options: PluginsDirOptions): string {
  const root = mkdtempSync(join(tmpdir(), 'homeclaw-e2e-plugins-'));
  for (const shipped of options.shipped ?? []) {
    const folder = join(root, shipped.id);
    mkdirSync(folder);
    copyFileSync(join(SHIPPED_PLUGINS_DIR, shipped.id, 'plugin.yaml'), join(folder, 'plugin.yaml'));
    if (shipped.config !== undefined) writeFileSync(join(folder, 'config.yml'), shipped.config);
    else if (existsSync(join(SHIPPED_PLUGINS_DIR, shipped.id, 'config.yml')))
      copyFileSync(join(SHIPPED_PLUGINS_DIR, shipped.id, 'config.yml'), join(folder, 'config.yml'));
    const compiled = join(REPO_ROOT, 'dist', 'plugins', shipped.id, 'index.js');
    writeFileSync(join(folder, 'index.js'), `export * from ${JSON.stringify(compiled)};\n`);
  }
  for (const builtin of options.builtins ?? []) {
    const folder = join(root, builtin.id);
    mkdirSync(folder);
    writeFileSync(join(folder, 'plugin.yaml'), builtin.manifest);
    writeFileSync(join(folder, 'index.js'), builtin.module);
    if (builtin.config !== undefined) writeFileSync(join(folder, 'config.yml'), builtin.config);
  }
  return root;
}

export interface ChannelUser {
  /** Publishes on the channel in topic and waits for the reply with the same request_id. */
  say(text: string, extra?: Record<string, unknown>, timeoutMs?: number): Promise<ChannelMessageOut>;
}

/** A user on one channel; the client must already be subscribed to the channel's out topic. */
export function channelUser(client: TestClient, channel: string, userId: string, sessionId?: string): ChannelUser {
  return {
    async say(text, extra = {}, timeoutMs = 10_000) {
      const request_id = randomUUID();
      const waiting = client.waitFor(topics.channelOut(channel), (m) => m.json<ChannelMessageOut>().request_id === request_id, timeoutMs);
      await client.publish(topics.channelIn(channel), { request_id, user_id: userId, ...(sessionId ? { session_id: sessionId } : {}), text, ...extra });
      const reply = (await waiting).json<ChannelMessageOut>();
      return reply;
    },
  };
}
