// Keeps adapters in step with the registry: a plugin registered or changed is attached to its adapter
// (connect an MCP server, start health polling), a removed one detached. Failures are logged and
// reflected in the plugin's state; they never reach the registry's emitter.
import type { AdapterMap } from './adapter-map.js';
import type { Logger } from '../log.js';
import type { PluginRecord } from '../registry/record.js';
import type { RegistryApi } from '../registry/registry-api.js';

export interface AdapterAttachmentsDeps {
  registry: RegistryApi;
  adapters: AdapterMap;
  log: Logger;
}

export class AdapterAttachments {
  private readonly offs: (() => void)[] = [];

  constructor(private readonly deps: AdapterAttachmentsDeps) {}

  /** Attaches every plugin already in the registry (restored from the database) and follows changes. */
  start(): void {
    const { registry } = this.deps;
    this.offs.push(
      registry.events.on('plugin.registered', ({ record }) => this.attach(record)),
      registry.events.on('plugin.updated', ({ record, previous }) => {
        // An adapter may re-register its own plugin with richer data (MCP tool lists): only a change of
        // the connection settings needs a fresh attachment.
        if (JSON.stringify(record.descriptor.config) !== JSON.stringify(previous.descriptor.config) || record.descriptor.type !== previous.descriptor.type) {
          this.detach(previous);
          this.attach(record);
        }
      }),
      registry.events.on('plugin.removed', ({ record }) => this.detach(record)),
    );
    for (const record of registry.list()) this.attach(record);
  }

  attachAll(type: string): void {
    for (const record of this.deps.registry.list()) if (record.descriptor.type === type) this.attach(record);
  }

  private attach(record: PluginRecord): void {
    const adapter = this.deps.adapters.get(record.descriptor.type);
    if (!adapter?.attach) return;
    Promise.resolve()
      .then(() => adapter.attach?.(record))
      .catch((err: unknown) => {
        this.deps.log.error({ err, plugin_id: record.descriptor.id }, 'adapter could not attach the plugin');
        this.deps.registry.setState(record.descriptor.id, 'error', `adapter failed: ${(err as Error).message}`);
      });
  }

  private detach(record: PluginRecord): void {
    const adapter = this.deps.adapters.get(record.descriptor.type);
    if (!adapter?.detach) return;
    Promise.resolve()
      .then(() => adapter.detach?.(record))
      .catch((err: unknown) => this.deps.log.error({ err, plugin_id: record.descriptor.id }, 'adapter could not detach the plugin'));
  }

  stop(): void {
    for (const off of this.offs.splice(0)) off();
  }
}
