// Everything between an invoke message and its result: check the request, check the parameters,
// respect the deadline, run the handler within the concurrency limit, and answer exactly once.
import PQueue from 'p-queue';
import { isRequestId } from '../protocol/ids.js';
import { MAX_CALL_TIMEOUT_MS } from '../protocol/limits.js';
import { parseTraceparent } from '../protocol/trace-context.js';
import type { CapabilitySpec, JsonObject, JsonValue, PluginRequest, PluginResult, ValidationIssue } from '../protocol/types.js';
import { parseJsonPayload, validatePayload } from '../protocol/validate.js';
import type { ParameterValidator } from './parameter-validator.js';
import type { CapabilityHandlers, HandlerOutput, PluginStats, SdkLogger } from './types.js';
import { thrownValueMessage } from '../kit/error-message.js';
import { formatIssues } from '../kit/format-issues.js';
import { RecentIds } from '../kit/recent-ids.js';

export interface InvocationRunnerDeps {
  pluginId: string;
  capabilities: CapabilitySpec[];
  handlers: CapabilityHandlers;
  parameters: ParameterValidator;
  max_concurrency: number;
  max_payload_bytes: number;
  log: SdkLogger;
  stats: PluginStats;
  /** Publishes on result/<request_id>, QoS 1. */
  publishResult(result: PluginResult): Promise<void>;
}

/** How many finished request ids are remembered so a redelivered QoS 1 invoke is not run twice. */
const RECENT_LIMIT = 1000;

/** What an MQTT 5 invoke message carries beside its payload. */
export interface InvokeProperties {
  /** Seconds left of the message's expiry when it arrived. */
  messageExpiryInterval?: number;
  userProperties?: Record<string, string | string[]>;
}

/**
 * The deadline in this machine's clock. The request's absolute deadline assumes synchronised clocks; the
 * remaining message expiry (MQTT 5) is relative, so it bounds the deadline from above, and it decides
 * alone when the absolute one looks already past although the broker still delivered the message (this
 * clock runs ahead of the Core's).
 */
export function effectiveDeadline(requestDeadline: number, arrivedAt: number, expirySec: number | undefined): number {
  if (expirySec === undefined) return requestDeadline;
  const byExpiry = arrivedAt + expirySec * 1000;
  return requestDeadline <= arrivedAt ? byExpiry : Math.min(requestDeadline, byExpiry);
}

/**
 * One running invocation. Its AbortController and deadline timer are created only when the handler
 * reads its signal: most handlers never do, and both cost more than a fast handler. A handler that
 * finishes past the deadline is treated exactly as if the signal had fired.
 */
interface ActiveRun {
  deadline: number;
  traceparent?: string;
  controller?: AbortController;
  timer?: NodeJS.Timeout;
  aborted?: Error;
}

function abortRun(run: ActiveRun, reason: Error): void {
  if (run.aborted) return;
  run.aborted = reason;
  run.controller?.abort(reason);
}

function signalOf(run: ActiveRun): AbortSignal {
  if (!run.controller) {
    run.controller = new AbortController();
    if (run.aborted) run.controller.abort(run.aborted);
    else {
      const left = Math.max(0, run.deadline - Date.now());
      run.timer = setTimeout(() => abortRun(run, new Error('deadline reached')), Math.min(left, MAX_CALL_TIMEOUT_MS));
    }
  }
  return run.controller.signal;
}

/** True once the run was aborted or its deadline passed (whether or not anyone watched the signal). */
function isOver(run: ActiveRun): boolean {
  if (!run.aborted && Date.now() >= run.deadline) run.aborted = new Error('deadline reached');
  return run.aborted !== undefined;
}

export class InvocationRunner {
  private readonly queue: PQueue;
  private readonly capabilities: Map<string, CapabilitySpec>;
  private readonly active = new Map<string, ActiveRun>();
  private readonly recent = new RecentIds(RECENT_LIMIT);
  private closed = false;

  constructor(private readonly deps: InvocationRunnerDeps) {
    this.queue = new PQueue({ concurrency: deps.max_concurrency });
    this.capabilities = new Map(deps.capabilities.map((c) => [c.id, c]));
  }

  /** Never throws: every problem ends as a failed result on the request's topic, or a log line. */
  onInvoke(payload: Buffer, properties?: InvokeProperties): void {
    try {
      this.accept(payload, properties);
    } catch (error) {
      this.deps.log.error({ err: error }, 'invoke handling failed');
    }
  }

  /** Stops accepting work and aborts running handlers; their results are not sent. */
  close(): void {
    this.closed = true;
    this.queue.clear();
    for (const run of this.active.values()) abortRun(run, new Error('plugin closing'));
  }

  /** Resolves when every queued and running handler has finished. */
  idle(): Promise<void> {
    return this.queue.onIdle();
  }

  private accept(payload: Buffer, properties: InvokeProperties | undefined): void {
    const { log, stats, pluginId } = this.deps;
    if (this.closed) return;
    const parsed = parseJsonPayload(payload, this.deps.max_payload_bytes);
    if (!parsed.ok) {
      stats.dropped++;
      log.warn({ errors: parsed.errors }, 'unreadable invoke dropped');
      return;
    }
    const valid = validatePayload('invoke', parsed.value);
    if (!valid.ok) {
      const requestId = parsed.value['request_id'];
      if (isRequestId(requestId)) {
        this.refuse(requestId, `invalid request: ${formatIssues(valid.errors)}`, valid.errors);
      } else {
        stats.dropped++;
        log.warn({ errors: valid.errors }, 'invalid invoke without a usable request_id dropped');
      }
      return;
    }
    const request = valid.value;
    if (this.active.has(request.request_id) || this.recent.has(request.request_id)) {
      stats.dropped++;
      log.info({ request_id: request.request_id }, 'duplicate invoke dropped');
      return;
    }
    if (request.plugin_id !== pluginId) {
      this.refuse(request.request_id, `request is addressed to plugin "${request.plugin_id}", not "${pluginId}"`);
      return;
    }
    const now = Date.now();
    const deadline = effectiveDeadline(request.deadline, now, properties?.messageExpiryInterval);
    if (now >= deadline) {
      stats.dropped++;
      log.warn({ request_id: request.request_id, deadline: request.deadline }, 'invoke past its deadline dropped');
      return;
    }
    const capability = this.capabilities.get(request.capability_id);
    if (!capability) {
      const known = [...this.capabilities.keys()].join(', ');
      this.refuse(request.request_id, `unknown capability "${request.capability_id}" of plugin "${pluginId}" (known: ${known || 'none'})`);
      return;
    }
    const problems = this.deps.parameters.check(capability.id, request.parameters);
    if (problems.length > 0) {
      this.refuse(request.request_id, `invalid parameters for "${capability.id}": ${formatIssues(problems)}`, problems);
      return;
    }
    const traceparent = properties?.userProperties?.['traceparent'];
    this.schedule(request, deadline, typeof traceparent === 'string' && parseTraceparent(traceparent) ? traceparent : undefined);
  }

  private schedule(request: PluginRequest, deadline: number, traceparent: string | undefined): void {
    const run: ActiveRun = { deadline };
    if (traceparent !== undefined) run.traceparent = traceparent;
    this.active.set(request.request_id, run);
    this.deps.stats.invocations++;
    void this.queue
      .add(() => this.run(request, run))
      .catch((error: unknown) => {
        this.deps.log.error({ err: error, request_id: request.request_id }, 'invocation failed outside its handler');
      });
  }

  private async run(request: PluginRequest, run: ActiveRun): Promise<void> {
    const { log, stats } = this.deps;
    const { request_id } = request;
    if (isOver(run) || this.closed) {
      // It waited in the queue past its deadline: the Core has already answered the caller.
      this.finish(request_id);
      stats.dropped++;
      log.warn({ request_id }, 'queued invoke reached its deadline before it could run; dropped');
      return;
    }
    let result: PluginResult;
    try {
      const output = await this.deps.handlers[request.capability_id]!(request.parameters, {
        request,
        deadline: run.deadline,
        traceparent: run.traceparent,
        get signal(): AbortSignal {
          return signalOf(run);
        },
        progress: (message) => this.progress(request_id, message, run),
        log,
      });
      result = this.successResult(request_id, output);
    } catch (error) {
      result = this.failure(request_id, thrownValueMessage(error));
    } finally {
      clearTimeout(run.timer);
      this.finish(request_id);
    }
    if (isOver(run)) {
      stats.late++;
      log.warn({ request_id, reason: thrownValueMessage(run.aborted) }, 'handler finished after abort; result not sent');
      return;
    }
    if (result.success) stats.succeeded++;
    else stats.failed++;
    await this.send(result);
  }

  private successResult(requestId: string, output: HandlerOutput): PluginResult {
    const result: PluginResult = { request_id: requestId, plugin_id: this.deps.pluginId, success: true };
    if (typeof output === 'string') {
      result.text = output;
    } else if (output !== undefined && output !== null && typeof output === 'object') {
      if (output.text !== undefined) result.text = String(output.text);
      if (output.data !== undefined) result.data = toJson(output.data);
      if (output.metadata !== undefined) result.metadata = toJson(output.metadata) as JsonObject;
      if (output.ask_user !== undefined) result.ask_user = output.ask_user;
      if (output.missing_parameters !== undefined) result.missing_parameters = output.missing_parameters;
    } else if (output !== undefined && output !== null) {
      // A handler written in plain JavaScript may return a number or boolean.
      result.text = String(output);
    }
    return result;
  }

  private async progress(requestId: string, message: string, run: ActiveRun): Promise<void> {
    if (isOver(run)) return;
    try {
      await this.deps.publishResult({
        request_id: requestId,
        plugin_id: this.deps.pluginId,
        success: true,
        progress: true,
        text: String(message),
      });
    } catch (error) {
      this.deps.log.warn({ err: error, request_id: requestId }, 'progress event not sent');
    }
  }

  private refuse(requestId: string, message: string, issues?: ValidationIssue[]): void {
    this.deps.stats.refused++;
    this.deps.log.warn({ request_id: requestId, error: message }, 'invoke refused');
    this.recent.add(requestId);
    void this.send(this.failure(requestId, message, issues));
  }

  private failure(requestId: string, message: string, issues?: ValidationIssue[]): PluginResult {
    const result: PluginResult = { request_id: requestId, plugin_id: this.deps.pluginId, success: false, error: message };
    if (issues && issues.length > 0) {
      result.metadata = { errors: issues.map((issue) => ({ path: issue.path, message: issue.message })) };
    }
    return result;
  }

  private async send(result: PluginResult): Promise<void> {
    try {
      await this.deps.publishResult(result);
    } catch (error) {
      this.deps.log.error({ err: error, request_id: result.request_id }, 'result not sent');
    }
  }

  private finish(requestId: string): void {
    this.active.delete(requestId);
    this.recent.add(requestId);
  }
}

/** Round-trips through JSON so a Date or class instance becomes what the wire will carry anyway. */
function toJson(value: unknown): JsonValue {
  const text = JSON.stringify(value);
  if (text === undefined) throw new Error('handler output is not JSON-serialisable');
  return JSON.parse(text) as JsonValue;
}
