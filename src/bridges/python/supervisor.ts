// Keeps the Python host of one plugin source (a plugin folder, or a file under embedded_plugins/) serving:
//   - a host that crashes fails its in-flight calls at once, its plugins turn stale with the reason, and it
//     is restarted after a delay that doubles on each crash in a row (initial → max); a host that ran for
//     `stable_ms` before crashing starts again from the initial delay. A restart that fails to load puts
//     the plugins in state error with the reason, and is retried on the same schedule.
//   - a call cancelled at its deadline that the host has not ended `hang_grace_ms` later (Python cannot
//     interrupt a running thread) gets the host replaced: a fresh host takes the new calls, the old one
//     finishes the calls it still runs and then ends, taking the hung call with it.
//   - retire() (the source was reloaded or removed) lets running calls finish, then ends the host;
//     stop() ends everything now.
import type { Logger } from '../../log.js';
import type { JsonObject, PluginRequest, PluginResult } from '../../protocol/types.js';
import type { PluginState } from '../../registry/record.js';
import type { RegistryApi } from '../../registry/registry-api.js';
import type { HealthReport } from '../../adapters/adapter.js';
import { coerceResult, failure } from '../../adapters/plugin-result.js';
import { PythonHostProcess, type HostLaunchSpec, type LaunchOutcome } from './host-process.js';
import type { HostHello, HostResult } from './protocol.js';

export interface SupervisorSettings {
  restart_backoff: { initial_ms: number; max_ms: number };
  startup_timeout_ms: number;
  hang_grace_ms: number;
  stable_ms: number;
}

export const DEFAULT_SUPERVISOR_SETTINGS: SupervisorSettings = {
  restart_backoff: { initial_ms: 500, max_ms: 30_000 },
  startup_timeout_ms: 15_000,
  hang_grace_ms: 2_000,
  stable_ms: 10_000,
};

export interface SupervisorDeps {
  /** Names the source in messages: "python plugin weather", "python file llm_tools/calc.py". */
  label: string;
  launch: Omit<HostLaunchSpec, 'log' | 'startup_timeout_ms'>;
  registry: RegistryApi;
  /** The plugin ids whose state follows this host. */
  pluginIds: () => string[];
  log: Logger;
  settings: SupervisorSettings;
}

export interface PythonCall {
  /** The plugin class in the host. */
  target: string;
  capability_id: string;
  parameters: JsonObject;
  request: PluginRequest;
  signal: AbortSignal;
}

type Phase = 'new' | 'running' | 'restarting' | 'retired' | 'stopped';

export class PythonSupervisor {
  hello: HostHello | undefined;
  private current: PythonHostProcess | undefined;
  private readonly processes = new Set<PythonHostProcess>();
  private phase: Phase = 'new';
  private attempt = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private lastProblem: string | undefined;
  private replacing = false;

  constructor(private readonly deps: SupervisorDeps) {}

  get label(): string {
    return this.deps.label;
  }

  /** Not retired or stopped: still the source's server. */
  get active(): boolean {
    return !this.ended;
  }

  /** Retired or stopped, with no host left running. */
  get finished(): boolean {
    return this.ended && this.processes.size === 0;
  }

  private get ended(): boolean {
    return this.phase === 'retired' || this.phase === 'stopped';
  }

  /** Starts the first host; on failure nothing is left running. */
  async start(): Promise<{ ok: true; hello: HostHello } | { ok: false; error: string }> {
    const outcome = await this.launch();
    if (!outcome.ok) {
      this.phase = 'stopped';
      return outcome;
    }
    if (this.ended) {
      await outcome.process.stop();
      return { ok: false, error: `${this.deps.label} was unloaded while it started` };
    }
    this.adopt(outcome.process);
    this.hello = outcome.hello;
    this.phase = 'running';
    return { ok: true, hello: outcome.hello };
  }

  async invoke(call: PythonCall): Promise<PluginResult> {
    const { request } = call;
    if (this.ended) return failure(request, `${this.deps.label} is unloaded`, 'offline');
    const host = this.current;
    if (!host) return failure(request, this.lastProblem ?? `${this.deps.label} is restarting`, 'stale');
    const outcome = await host.invoke(
      { id: request.request_id, target: call.target, capability: call.capability_id, params: call.parameters, deadline: request.deadline, request },
      call.signal,
    );
    if (outcome.kind === 'result') return this.toResult(request, outcome.result);
    if (outcome.kind === 'lost') {
      if (this.phase === 'stopped') return failure(request, `${this.deps.label} was stopped during the call`, 'offline');
      return failure(request, `python plugin ${request.plugin_id} ended during ${request.capability_id}: the Python host ${outcome.reason}`, 'plugin_error');
    }
    this.watchCancelled(host, request.request_id);
    const reason = call.signal.reason instanceof Error ? call.signal.reason.message : 'cancelled';
    return failure(
      request,
      `python plugin ${request.plugin_id} did not finish ${request.capability_id}: ${reason}`,
      /deadline|within|time/i.test(reason) ? 'timeout' : 'cancelled',
    );
  }

  health(): HealthReport {
    const host = this.current;
    if (!host || this.ended) return { ok: false, detail: this.lastProblem ?? `${this.deps.label} is not running` };
    const up = Math.round((Date.now() - host.startedAt) / 1000);
    return { ok: true, detail: `pid ${host.pid}, Python ${this.hello?.python ?? '?'}, up ${up} s` };
  }

  /** Process ids of every host of this source that is still alive, the one taking new calls first. */
  pids(): number[] {
    const hosts = [...this.processes].filter((p) => p.alive);
    hosts.sort((a, b) => Number(b === this.current) - Number(a === this.current));
    return hosts.map((p) => p.pid);
  }

  /** Takes no new calls; the running ones finish (at the latest at their deadlines), then the host ends. */
  retire(): void {
    if (this.ended) return;
    this.phase = 'retired';
    clearTimeout(this.retryTimer);
    for (const host of this.processes) host.retire();
  }

  /** Ends every host of this source now; running calls fail. */
  async stop(): Promise<void> {
    this.phase = 'stopped';
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    await Promise.all([...this.processes].map((host) => host.stop()));
  }

  private launch(): Promise<LaunchOutcome> {
    return PythonHostProcess.launch({
      ...this.deps.launch,
      log: this.deps.log,
      startup_timeout_ms: this.deps.settings.startup_timeout_ms,
    });
  }

  private adopt(host: PythonHostProcess): void {
    this.processes.add(host);
    this.current = host;
    host.onExit = (reason, expected) => this.onExit(host, reason, expected);
  }

  private onExit(host: PythonHostProcess, reason: string, expected: boolean): void {
    this.processes.delete(host);
    if (host !== this.current) return; // a replaced or retired host ending as planned
    this.current = undefined;
    if (expected || this.ended) return;
    if (Date.now() - host.startedAt >= this.deps.settings.stable_ms) this.attempt = 0;
    this.lastProblem = `${this.deps.label} crashed: the Python host ${reason}`;
    this.deps.log.warn({ host_pid: host.pid, reason }, this.lastProblem);
    this.setState('stale', this.lastProblem);
    this.scheduleRestart();
  }

  private scheduleRestart(): void {
    if (this.retryTimer || this.ended) return;
    this.phase = 'restarting';
    const { initial_ms, max_ms } = this.deps.settings.restart_backoff;
    const delay = Math.min(max_ms, initial_ms * 2 ** this.attempt);
    this.attempt += 1;
    this.deps.log.info({ delay_ms: delay, attempt: this.attempt }, `restarting ${this.deps.label} in ${delay} ms`);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.restart();
    }, delay);
    this.retryTimer.unref();
  }

  private async restart(): Promise<void> {
    if (this.ended) return;
    const outcome = await this.launch();
    if (this.ended) {
      if (outcome.ok) await outcome.process.stop();
      return;
    }
    if (!outcome.ok) {
      this.lastProblem = `${this.deps.label} could not be restarted: ${outcome.error}`;
      this.deps.log.error(this.lastProblem);
      this.setState('error', this.lastProblem);
      this.scheduleRestart();
      return;
    }
    if (this.current) {
      await outcome.process.stop(); // a hang replacement got there first
      return;
    }
    this.adopt(outcome.process);
    this.phase = 'running';
    this.lastProblem = undefined;
    this.deps.log.info({ host_pid: outcome.process.pid }, `${this.deps.label} restarted`);
    this.setState('online', 'the Python host was restarted');
  }

  private watchCancelled(host: PythonHostProcess, requestId: string): void {
    const timer = setTimeout(() => {
      if (host.alive && host.isRunning(requestId)) void this.replaceWedged(host, requestId);
    }, this.deps.settings.hang_grace_ms);
    timer.unref();
  }

  private async replaceWedged(host: PythonHostProcess, requestId: string): Promise<void> {
    if (host !== this.current || this.replacing || this.ended) return;
    this.replacing = true;
    this.deps.log.warn(
      { host_pid: host.pid, request_id: requestId },
      `${this.deps.label}: call ${requestId} still runs ${this.deps.settings.hang_grace_ms} ms after it was cancelled; replacing the Python host`,
    );
    const outcome = await this.launch();
    this.replacing = false;
    if (this.ended) {
      if (outcome.ok) await outcome.process.stop();
      return;
    }
    if (!outcome.ok) {
      this.deps.log.error({ error: outcome.error }, `${this.deps.label}: no replacement host could start; the old one keeps serving`);
      return;
    }
    const wasRestarting = this.current === undefined;
    if (!wasRestarting && this.current !== host) {
      await outcome.process.stop();
      return;
    }
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.adopt(outcome.process);
    this.phase = 'running';
    if (wasRestarting) this.setState('online', 'the Python host was restarted');
    else host.retire();
  }

  private toResult(request: PluginRequest, result: HostResult): PluginResult {
    if (result.ok) return coerceResult(request, result.value);
    if (result.cancelled) return failure(request, `python plugin ${request.plugin_id}: ${request.capability_id} was cancelled`, 'cancelled');
    if (result.timed_out) return failure(request, `python plugin ${request.plugin_id} did not finish ${request.capability_id} before its deadline`, 'timeout');
    if (result.traceback)
      this.deps.log.warn(
        { request_id: request.request_id, traceback: result.traceback },
        `python plugin ${request.plugin_id} raised ${result.error_type ?? 'an exception'}`,
      );
    return failure(request, `python plugin ${request.plugin_id} failed in ${request.capability_id}: ${result.error ?? 'unknown error'}`, 'plugin_error');
  }

  private setState(state: PluginState, reason: string): void {
    for (const id of this.deps.pluginIds()) if (this.deps.registry.get(id)) this.deps.registry.setState(id, state, reason);
  }
}
