// The adapter for `type: python` plugins: maps a plugin id to the supervisor (and the class in it) that
// serves it. Routes stack per id: a reloaded folder binds its new host before the old one is released,
// and a folder refused for a duplicate id releases only its own route, so the id keeps its working host.
import type { AdapterCall, HealthReport, PluginAdapter } from '../../adapters/adapter.js';
import { failure } from '../../adapters/plugin-result.js';
import type { PluginResult } from '../../protocol/types.js';
import type { PluginRecord } from '../../registry/record.js';
import type { PythonSupervisor } from './supervisor.js';

export interface PythonRoute {
  supervisor: PythonSupervisor;
  /** The plugin class in the host. */
  target: string;
}

export class PythonAdapter implements PluginAdapter {
  readonly type = 'python' as const;
  private readonly routes = new Map<string, PythonRoute[]>();
  private readonly supervisors = new Set<PythonSupervisor>();

  /** Every supervisor is tracked from its start, so stop() ends its hosts even if it never served. */
  track(supervisor: PythonSupervisor): void {
    for (const known of this.supervisors) if (known.finished) this.supervisors.delete(known);
    this.supervisors.add(supervisor);
  }

  bind(pluginId: string, route: PythonRoute): void {
    const list = this.routes.get(pluginId) ?? [];
    list.push(route);
    this.routes.set(pluginId, list);
  }

  unbind(pluginId: string, route: PythonRoute): void {
    const list = (this.routes.get(pluginId) ?? []).filter((r) => r !== route);
    if (list.length > 0) this.routes.set(pluginId, list);
    else this.routes.delete(pluginId);
  }

  /** The route calls to this id take now. */
  routeOf(pluginId: string): PythonRoute | undefined {
    const list = this.routes.get(pluginId);
    return list?.[list.length - 1];
  }

  invoke(call: AdapterCall): Promise<PluginResult> {
    const route = this.routeOf(call.record.descriptor.id);
    if (!route) return Promise.resolve(failure(call.request, `python plugin ${call.record.descriptor.id} is not loaded`, 'offline'));
    return route.supervisor.invoke({
      target: route.target,
      capability_id: call.capability.id,
      parameters: call.request.parameters,
      request: call.request,
      signal: call.signal,
    });
  }

  async health(record: PluginRecord): Promise<HealthReport> {
    const route = this.routeOf(record.descriptor.id);
    if (!route) return { ok: false, detail: `python plugin ${record.descriptor.id} is not loaded` };
    return route.supervisor.health();
  }

  /** Process ids of the hosts serving a plugin (tests, status). */
  pidsOf(pluginId: string): number[] {
    return this.routeOf(pluginId)?.supervisor.pids() ?? [];
  }

  /** Every host process of every supervisor still known (tests: no orphans). */
  allPids(): number[] {
    return [...this.supervisors].flatMap((s) => s.pids());
  }

  async stop(): Promise<void> {
    const all = [...this.supervisors];
    this.supervisors.clear();
    this.routes.clear();
    await Promise.all(all.map((s) => s.stop()));
  }
}
