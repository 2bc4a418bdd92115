// Invocation: every call is validated, queued per plugin, given a deadline and ends exactly once.
import { randomUUID } from 'node:crypto';
import type { AdapterCall, PluginAdapter } from '../adapters/adapter.js';
import { adapterMap, type AdapterMap } from '../adapters/adapter-map.js';
import type { DispatchConfig } from '../config/types.js';
import type { Logger } from '../log.js';
import { MAX_CALL_TIMEOUT_SEC, MAX_PARAMETER_DEPTH } from '../protocol/limits.js';
import type { CapabilitySpec, ErrorCode, PluginRequest, PluginResult } from '../protocol/types.js';
import type { PluginRecord } from '../registry/record.js';
import type { RegistryApi } from '../registry/registry-api.js';
import { ConcurrencyGate } from './concurrency-gate.js';
import type { DispatcherApi, InvocationAudit, InvocationGuard, InvocationRefusal, InvokeOptions } from './dispatcher-api.js';
import { ParamValidator } from './param-validator.js';
import { buildPluginRequest } from './plugin-request.js';
import { withParameterDefaults } from './parameter-defaults.js';
import { withCallerIdentity } from './caller-identity.js';
import type { InvocationEventBus } from './invocation-events.js';
import { errorMessage } from '../kit/error-message.js';
import { findCapability } from '../kit/find-capability.js';
import { nestsDeeperThan } from '../kit/json-depth.js';
import { explainPrototypeKey, findPrototypeKey } from '../kit/prototype-keys.js';

/** What observers learn about each finished invocation (no parameters: they may hold personal data). */
export interface InvocationRecord {
  request_id: string;
  plugin_id: string;
  capability_id: string;
  success: boolean;
  error_code?: ErrorCode;
  duration_ms: number;
  [key: string]: string | number | boolean | undefined;
}

export interface DispatcherDeps {
  registry: RegistryApi;
  /** The adapters by plugin type. A map is shared, not copied: adapters added to it later are used too. */
  adapters: PluginAdapter[] | AdapterMap;
  config: DispatchConfig;
  log: Logger;
  now?: () => number;
  /** The Core's app id, sent as PluginRequest.app_id when the caller names none (config app_id). */
  app_id?: string;
  /** Told of every invocation once it ended, run or refused (`invocation.finished`). */
  events?: InvocationEventBus;
  /** Policy and confirmation, asked before anything is sent: a refusal never reaches the plugin. */
  guard?: InvocationGuard;
}

interface InFlight {
  plugin_id: string;
  abort: (code: ErrorCode, message: string) => void;
}

export interface DispatcherStats {
  invoked: number;
  succeeded: number;
  failed: number;
  timed_out: number;
  rejected_busy: number;
  in_flight: number;
}

export class Dispatcher implements DispatcherApi {
  private readonly adapters: AdapterMap;
  private readonly queues = new Map<string, ConcurrencyGate>();
  private readonly inFlight = new Map<string, InFlight>();
  private readonly validator = new ParamValidator();
  private readonly stats: Omit<DispatcherStats, 'in_flight'> = {
    invoked: 0,
    succeeded: 0,
    failed: 0,
    timed_out: 0,
    rejected_busy: 0,
  };
  private readonly unsubscribe: (() => void)[] = [];
  private readonly now: () => number;

  constructor(private readonly deps: DispatcherDeps) {
    this.now = deps.now ?? Date.now;
    this.adapters = deps.adapters instanceof Map ? deps.adapters : adapterMap(deps.adapters);
    // A plugin that goes away mid-call must not leave its callers waiting for the deadline.
    this.unsubscribe.push(
      deps.registry.events.on('plugin.health', ({ record }) => {
        if (record.state === 'offline' || record.state === 'error') {
          this.failInFlight(record.descriptor.id, 'offline', `plugin ${record.descriptor.id} went offline during the call`);
        }
      }),
      deps.registry.events.on('plugin.removed', ({ record }) => {
        this.failInFlight(record.descriptor.id, 'offline', `plugin ${record.descriptor.id} was unregistered during the call`);
        this.queues.delete(record.descriptor.id);
      }),
    );
  }

  registerAdapter(adapter: PluginAdapter): void {
    this.adapters.set(adapter.type, adapter);
  }

  /** The plugin a pending request was sent to: the broker ACL uses it to accept a result only from its owner. */
  requestTarget(requestId: string): string | undefined {
    return this.inFlight.get(requestId)?.plugin_id;
  }

  getStats(): DispatcherStats {
    return { ...this.stats, in_flight: this.inFlight.size };
  }

  async invoke(options: InvokeOptions): Promise<PluginResult> {
    this.stats.invoked++;
    const request_id = randomUUID();
    // The audit names the capability that was resolved (the default one when the caller gave none).
    let auditedCapability = options.capability_id ?? '';
    const fail = (error_code: ErrorCode, error: string): PluginResult => {
      this.stats.failed++;
      if (error_code === 'busy') this.stats.rejected_busy++;
      this.deps.log.info({ request_id, plugin_id: options.plugin_id, error_code, error }, 'invocation refused');
      this.announce(
        options,
        { request_id, plugin_id: options.plugin_id, capability_id: auditedCapability, success: false, error_code, duration_ms: 0 },
        error_code,
        true,
      );
      return { request_id, plugin_id: options.plugin_id, success: false, error, error_code };
    };

    const record = this.deps.registry.get(options.plugin_id);
    if (!record) return fail('not_found', `no plugin with id "${options.plugin_id}" is registered`);
    const capability = findCapability(record.descriptor, options.capability_id);
    if (!capability) {
      const known = record.descriptor.capabilities.map((c) => c.id).join(', ') || 'none';
      return fail('not_found', `plugin "${record.descriptor.id}" has no capability "${options.capability_id ?? ''}" (capabilities: ${known})`);
    }
    auditedCapability = capability.id;
    const refusal = this.refusalFor(record, capability, options);
    if (refusal) return fail(refusal.code, refusal.message);
    if (record.state !== 'online') {
      const code: ErrorCode = record.state === 'stale' ? 'stale' : 'offline';
      const why = record.state_reason ? `: ${record.state_reason}` : '';
      return fail(code, `plugin "${record.descriptor.id}" is ${record.state}${why}`);
    }
    // Before the defaults are filled in: the copy that takes them would turn the key into its prototype.
    const prototypeKey = findPrototypeKey(options.parameters, MAX_PARAMETER_DEPTH + 1);
    if (prototypeKey !== undefined) {
      return fail('invalid_params', `invalid parameters for ${record.descriptor.id}.${capability.id}: ${explainPrototypeKey(prototypeKey)}`);
    }
    // Defaults first, so every path (HTTP, CLI, MCP, MQTT, conversation) validates and sends the same values.
    // Identity last: neither the caller nor a configured default may name another user.
    const parameters = withCallerIdentity(capability, withParameterDefaults(record.descriptor.config, capability, options.parameters ?? {}), options.context);
    if (nestsDeeperThan(parameters, MAX_PARAMETER_DEPTH)) {
      // Checked before anything walks them: the schema check, the copy and the serialisation all recurse.
      return fail(
        'invalid_params',
        `invalid parameters for ${record.descriptor.id}.${capability.id}: nested deeper than ${MAX_PARAMETER_DEPTH} levels of objects and arrays`,
      );
    }
    const problems = this.validator.validate(record.content_hash, capability, parameters);
    if (problems.length > 0) {
      return {
        ...fail('invalid_params', `invalid parameters for ${record.descriptor.id}.${capability.id}: ${problems.map((p) => p.message).join('; ')}`),
        metadata: { problems: problems.map((p) => ({ path: p.path, message: p.message })) },
      };
    }
    const adapter = this.adapters.get(record.descriptor.type);
    if (!adapter) return fail('adapter_error', `no adapter can reach plugins of type "${record.descriptor.type}"`);

    const { queue, limit } = this.queueFor(record);
    if (queue.waiting >= limit) {
      return fail('busy', `plugin "${record.descriptor.id}" is busy: ${queue.running} running and ${queue.waiting} waiting (limit ${limit})`);
    }

    const timeoutSec = this.timeoutFor(record, capability, options.timeout_sec);
    const deadline = this.now() + Math.round(timeoutSec * 1000);
    // One builder for every transport (and, later, for the short requests of small devices).
    const request = buildPluginRequest({
      request_id,
      plugin_id: record.descriptor.id,
      capability_id: capability.id,
      parameters,
      deadline,
      context: options.context ?? {},
      app_id: this.deps.app_id,
    });
    return this.run(adapter, record, capability, request, queue, timeoutSec, options);
  }

  precheck(options: InvokeOptions): PluginResult | undefined {
    const record = this.deps.registry.get(options.plugin_id);
    const capability = record ? findCapability(record.descriptor, options.capability_id) : undefined;
    if (!record || !capability) return undefined; // invoke() explains unknown ids itself
    const refusal = this.refusalFor(record, capability, options);
    if (!refusal) return undefined;
    // Counted as an invocation refused at once, like invoke() would have.
    this.stats.invoked++;
    this.stats.failed++;
    this.deps.log.info({ plugin_id: options.plugin_id, capability_id: capability.id, error_code: refusal.code, error: refusal.message }, 'invocation refused');
    const request_id = randomUUID();
    const refused: InvocationRecord = {
      request_id,
      plugin_id: options.plugin_id,
      capability_id: capability.id,
      success: false,
      error_code: refusal.code,
      duration_ms: 0,
    };
    this.announce(options, refused, refusal.code, true);
    return { request_id, plugin_id: options.plugin_id, success: false, error: refusal.message, error_code: refusal.code };
  }

  /** The guard's verdict: the user the call is made for (context.user_id) and whether it was confirmed. */
  private refusalFor(record: PluginRecord, capability: CapabilitySpec, options: InvokeOptions): InvocationRefusal | undefined {
    return this.deps.guard?.check({
      plugin_id: record.descriptor.id,
      capability,
      ...(options.context?.user_id !== undefined ? { user_id: options.context.user_id } : {}),
      confirmed: options.confirmed === true,
    });
  }

  /** Tells the Core's observers (audit log, metrics, event feed) that an invocation ended. */
  private announce(options: InvokeOptions, record: InvocationRecord, outcome: string, refused: boolean): void {
    const events = this.deps.events;
    if (!events) return;
    const context = options.context ?? {};
    const audit: InvocationAudit = {
      ts: this.now(),
      ...(context.user_id !== undefined ? { user_id: context.user_id } : {}),
      ...(context.channel_name !== undefined ? { channel: context.channel_name } : {}),
      plugin_id: options.plugin_id,
      capability_id: record.capability_id,
      outcome,
      duration_ms: record.duration_ms,
    };
    events.emit('invocation.finished', { record, audit, refused });
  }

  private run(
    adapter: PluginAdapter,
    record: PluginRecord,
    capability: CapabilitySpec,
    request: PluginRequest,
    queue: ConcurrencyGate,
    timeoutSec: number,
    options: InvokeOptions,
  ): Promise<PluginResult> {
    const { request_id, plugin_id } = request;
    const log = this.deps.log;
    return new Promise<PluginResult>((resolve) => {
      let settled = false;
      // Created only when an adapter asks for the signal: an AbortController costs more than a fast call.
      let controller: AbortController | undefined;
      let abortReason: Error | undefined;
      let abortListeners: (() => void)[] | undefined;
      let releaseSlot: (() => void) | undefined;
      const startedAt = this.now();
      const settle = (result: PluginResult, code?: ErrorCode): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.inFlight.delete(request_id);
        if (result.success) this.stats.succeeded++;
        else if (code === 'timeout') this.stats.timed_out++;
        else this.stats.failed++;
        resolve(result);
        const finished: InvocationRecord = {
          request_id,
          plugin_id,
          capability_id: request.capability_id,
          success: result.success,
          ...(result.error_code ? { error_code: result.error_code } : {}),
          duration_ms: this.now() - startedAt,
        };
        this.announce(options, finished, result.success ? 'ok' : (result.error_code ?? code ?? 'plugin_error'), false);
      };
      const abort = (error_code: ErrorCode, error: string): void => {
        if (settled) return;
        abortReason = new Error(error);
        controller?.abort(abortReason);
        for (const listener of abortListeners ?? []) {
          try {
            listener();
          } catch (err) {
            log.error({ err, request_id }, 'abort listener failed');
          }
        }
        // The queue slot is freed at the deadline even if a plugin ignores the signal (a hung built-in
        // must not block every later call).
        releaseSlot?.();
        log.warn({ request_id, plugin_id, capability_id: request.capability_id, error_code }, error);
        settle({ request_id, plugin_id, success: false, error, error_code }, error_code);
      };
      const timer = setTimeout(
        () => abort('timeout', `plugin "${plugin_id}" did not answer within ${timeoutSec} s (${request.capability_id})`),
        Math.max(0, request.deadline - this.now()),
      );
      this.inFlight.set(request_id, { plugin_id, abort });
      const call: AdapterCall = {
        record,
        capability,
        request,
        traceparent: options.traceparent,
        get signal(): AbortSignal {
          if (!controller) {
            controller = new AbortController();
            if (abortReason) controller.abort(abortReason);
          }
          return controller.signal;
        },
        onAbort(listener: () => void): void {
          if (abortReason) listener();
          else {
            abortListeners ??= [];
            abortListeners.push(listener);
          }
        },
      };
      queue.enter(() => {
        let released = false;
        releaseSlot = () => {
          if (released) return;
          released = true;
          queue.leave();
        };
        if (settled) return releaseSlot(); // timed out or failed while waiting in the queue
        let answer: Promise<PluginResult>;
        try {
          answer = adapter.invoke(call);
        } catch (err) {
          answer = Promise.reject(err);
        }
        answer.then(
          (result) => {
            releaseSlot!();
            // Whatever the adapter says, the result belongs to this request.
            settle({ ...result, request_id, plugin_id });
          },
          (err: unknown) => {
            releaseSlot!();
            const message = errorMessage(err);
            settle({ request_id, plugin_id, success: false, error: message, error_code: 'adapter_error' }, 'adapter_error');
          },
        );
      });
    });
  }

  private failInFlight(pluginId: string, code: ErrorCode, message: string): void {
    for (const entry of [...this.inFlight.values()]) {
      if (entry.plugin_id === pluginId) entry.abort(code, message);
    }
  }

  private timeoutFor(record: PluginRecord, capability: CapabilitySpec, override?: number): number {
    const candidates = [override, capability.timeout_sec, record.descriptor.config.timeout_sec, this.deps.config.default_timeout_sec];
    // Capped: a longer timer would overflow and fire at once.
    for (const value of candidates) if (typeof value === 'number' && value > 0) return Math.min(value, MAX_CALL_TIMEOUT_SEC);
    return 30;
  }

  private queueFor(record: PluginRecord): { queue: ConcurrencyGate; limit: number } {
    const cfg = record.descriptor.config;
    const concurrency =
      typeof cfg.max_concurrency === 'number' && cfg.max_concurrency >= 1 ? Math.floor(cfg.max_concurrency) : this.deps.config.default_max_concurrency;
    const limit = typeof cfg.queue_limit === 'number' && cfg.queue_limit >= 0 ? Math.floor(cfg.queue_limit) : this.deps.config.default_queue_limit;
    let queue = this.queues.get(record.descriptor.id);
    if (!queue || queue.concurrency !== concurrency) {
      // A changed descriptor may change concurrency: new calls go to a fresh queue, running ones finish.
      queue = new ConcurrencyGate(concurrency);
      this.queues.set(record.descriptor.id, queue);
    }
    return { queue, limit };
  }

  async stop(): Promise<void> {
    for (const off of this.unsubscribe) off();
    for (const entry of [...this.inFlight.values()]) entry.abort('cancelled', 'the Core is shutting down');
    for (const adapter of this.adapters.values()) {
      try {
        await adapter.stop?.();
      } catch (err) {
        this.deps.log.error({ err, type: adapter.type }, 'adapter failed to stop');
      }
    }
  }
}
