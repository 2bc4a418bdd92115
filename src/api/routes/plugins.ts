// Plugin registration, listing, health and direct invocation over HTTP.
import type { FastifyInstance, preValidationHookHandler } from 'fastify';
import type { HealthReport } from '../../adapters/adapter.js';
import type { DispatcherApi } from '../../dispatch/dispatcher-api.js';
import { normalizeDescriptor } from '../../protocol/descriptor/normalize.js';
import type { ErrorCode, JsonObject, PluginDescriptor, ValidationIssue } from '../../protocol/types.js';
import type { PluginRecord } from '../../registry/record.js';
import type { RegisterInput, RegistryApi } from '../../registry/registry-api.js';
import { UNCLAIMED_OWNER } from '../../access/plugin-claims.js';
import { dedupeIssues } from '../../protocol/validate.js';
import { sendError } from '../errors.js';
import { listProblems, schemaProblems, validatedRoute } from '../route-validation.js';
import { CapabilityParams, PluginParams, RegistrationEnvelope, RunQueryString, ToolParameters, TransferRequest, UnregisterRequest } from './plugins-schema.js';
import { canonicalView, forgeSyteView, summaryView } from '../plugin-views.js';
import { readConfirmation } from '../confirmation-flag.js';
import { isPlainObject } from '../../kit/plain-object.js';

export interface PluginRoutesDeps {
  registry: RegistryApi;
  dispatcher: DispatcherApi;
  /** Live health check through the plugin's adapter. */
  health: (record: PluginRecord) => Promise<HealthReport>;
  /** Gives a plugin id to an MQTT credential (`homeclaw plugins transfer`); absent: the route answers 501. */
  transfer?: (
    pluginId: string,
    credential: string,
  ) => { ok: true; owner: string; previous_owner: string } | { ok: false; status: 400 | 404 | 409; error: string };
  /** Problems with where the plugin points (e.g. at the Core's own HTTP API); none means fine. */
  checkTargets?: (descriptor: PluginDescriptor) => Promise<ValidationIssue[]>;
}

/** HTTP status for a failed invocation; the body is always the PluginResult. */
const STATUS_BY_CODE: Record<ErrorCode, number> = {
  not_found: 404,
  invalid_params: 400,
  offline: 503,
  stale: 503,
  busy: 429,
  timeout: 504,
  plugin_error: 502,
  adapter_error: 502,
  cancelled: 503,
  forbidden: 403,
  confirmation_required: 428,
};

export function registerPluginRoutes(app: FastifyInstance, deps: PluginRoutesDeps): void {
  const { registry, dispatcher } = deps;

  app.get('/api/plugins', async () => ({ plugins: registry.list().map(summaryView) }));

  const onePlugin = validatedRoute({ params: PluginParams }, 'invalid plugin id');
  app.get<{ Params: PluginParams }>('/api/plugins/:id', onePlugin, async (request, reply) => {
    const record = registry.get(request.params.id);
    if (!record) return sendError(reply, 404, `no plugin with id "${request.params.id}" is registered`);
    return canonicalView(record);
  });

  app.get('/v1/plugins', async () => ({ plugins: registry.list().map(forgeSyteView) }));

  app.post('/api/plugins/register', async (request, reply) => {
    const body = request.body;
    if (!isPlainObject(body)) return sendError(reply, 400, 'the body must be a JSON object (a plugin descriptor)');
    const problems: ValidationIssue[] = schemaProblems(RegistrationEnvelope, body);
    // Metadata that names no type (ForgeSyte's, RAGFlow's) describes a service over HTTP.
    const type = body.type ?? 'http';
    // An MQTT device registered once by an administrator then only heartbeats; its interval comes along.
    const { heartbeat_interval_sec: interval, ...descriptorBody } = body;
    const normalized = normalizeDescriptor(type === 'mqtt' ? descriptorBody : body, { source: 'external', default_type: 'http' });
    // A field the envelope already refused (e.g. an unknown type) is named once.
    const named = new Set(problems.map((problem) => problem.path));
    if (!normalized.ok) problems.push(...normalized.errors.filter((error) => !named.has(error.path)));
    // HomeClaw's registration API requires a health URL of http plugins; the other dialects have none.
    else if (normalized.dialect === 'homeclaw' && normalized.descriptor.type === 'http' && !normalized.descriptor.health_check_url) {
      problems.push({ path: '/health_check_url', message: 'health_check_url is required for http plugins' });
    }
    if (normalized.ok && deps.checkTargets) problems.push(...(await deps.checkTargets(normalized.descriptor)));
    if (problems.length > 0 || !normalized.ok) {
      request.log.info({ problems }, 'plugin registration refused');
      return sendError(reply, 400, 'invalid plugin descriptor', dedupeIssues(problems));
    }
    const outcome = registry.register(
      normalized.descriptor.type === 'mqtt' ? mqttRegistration(registry, normalized.descriptor, interval) : { descriptor: normalized.descriptor, owner: 'api' },
    );
    if (!outcome.ok) {
      request.log.info({ problems: outcome.errors }, 'plugin registration refused');
      return sendError(reply, outcome.code === 'conflict' ? 409 : 400, outcome.errors.map((e) => e.message).join('; '), outcome.errors);
    }
    return reply.code(outcome.change === 'created' ? 201 : 200).send({
      plugin_id: outcome.record.descriptor.id,
      registered: true,
      change: outcome.change,
      dialect: normalized.dialect,
      ...(normalized.warnings ? { warnings: normalized.warnings } : {}),
    });
  });

  const unregister = validatedRoute({ body: UnregisterRequest }, 'invalid plugin_id');
  app.post<{ Body: UnregisterRequest }>('/api/plugins/unregister', unregister, async (request, reply) => {
    const id = request.body.plugin_id;
    const outcome = registry.unregister(id);
    if (!outcome.ok) return sendError(reply, outcome.code === 'not_found' ? 404 : 403, outcome.error);
    return { plugin_id: id, unregistered: true };
  });

  const transfer = validatedRoute(
    { params: PluginParams, body: TransferRequest },
    { params: 'invalid plugin id', body: 'invalid transfer request: name a plugin credential' },
  );
  app.post<{ Params: PluginParams; Body: TransferRequest }>('/api/plugins/:id/transfer', transfer, async (request, reply) => {
    const { credential } = request.body;
    if (!deps.transfer) return sendError(reply, 400, 'plugin transfer is not available');
    const outcome = deps.transfer(request.params.id, credential);
    if (!outcome.ok) return sendError(reply, outcome.status, outcome.error);
    request.log.warn({ plugin_id: request.params.id, owner: outcome.owner, previous_owner: outcome.previous_owner }, 'plugin transferred');
    return { plugin_id: request.params.id, owner: outcome.owner, previous_owner: outcome.previous_owner };
  });

  app.get<{ Params: PluginParams }>('/api/plugins/health/:id', onePlugin, async (request, reply) => {
    const record = registry.get(request.params.id);
    if (!record) return sendError(reply, 404, `no plugin with id "${request.params.id}" is registered`);
    const report = await deps.health(record).catch((err: unknown) => ({ ok: false, detail: (err as Error).message }));
    const after = registry.get(request.params.id) ?? record;
    return { plugin_id: record.descriptor.id, ok: report.ok, state: after.state, ...(report.detail ? { detail: report.detail } : {}) };
  });

  const run = validatedRoute(
    { params: CapabilityParams, body: ToolParameters, querystring: RunQueryString },
    { params: 'invalid plugin or capability id', body: 'invalid parameters', querystring: listProblems },
  );
  // No body: no parameters.
  const noBodyNoParameters: preValidationHookHandler = async (request) => {
    if (request.body === undefined || request.body === null) request.body = {};
  };
  app.post<{ Params: CapabilityParams; Body: JsonObject; Querystring: RunQueryString }>(
    '/v1/plugins/:id/tools/:tool/run',
    { ...run, preValidation: noBodyNoParameters },
    async (request, reply) => {
      const capability = registry.get(request.params.id)?.descriptor.capabilities.find((c) => c.id === request.params.tool);
      const flag = readConfirmation(request.body, request.query, capability);
      if (!flag.ok) return sendError(reply, 400, flag.error, [{ path: flag.path, message: flag.error }]);
      const result = await dispatcher.invoke({
        plugin_id: request.params.id,
        capability_id: request.params.tool,
        parameters: flag.parameters,
        context: { channel_name: 'http', channel_type: 'http' },
        confirmed: flag.confirmed,
        // W3C trace context: the invocation joins the caller's trace (MQTT 5 plugins receive it).
        ...(typeof request.headers.traceparent === 'string' ? { traceparent: request.headers.traceparent } : {}),
      });
      const status = result.success ? 200 : STATUS_BY_CODE[result.error_code ?? 'plugin_error'];
      return reply.code(status).send(result);
    },
  );
}

/**
 * An MQTT plugin registered by an administrator: the device behind it will only heartbeat. Until its
 * first heartbeat it is offline and its id belongs to no client (UNCLAIMED_OWNER); the first client that
 * may use the id claims it. Registering it again keeps its owner and liveness.
 */
function mqttRegistration(registry: RegistryApi, descriptor: PluginDescriptor, interval: unknown): RegisterInput {
  const existing = registry.get(descriptor.id);
  const heartbeat =
    typeof interval === 'number'
      ? { heartbeat_interval_sec: interval }
      : existing?.heartbeat_interval_sec !== undefined
        ? { heartbeat_interval_sec: existing.heartbeat_interval_sec }
        : {};
  if (existing && existing.descriptor.type === 'mqtt') {
    return {
      descriptor,
      owner: existing.owner,
      state: existing.state,
      ...(existing.state_reason !== undefined ? { state_reason: existing.state_reason } : {}),
      ...(existing.epoch !== undefined ? { epoch: existing.epoch } : {}),
      ...heartbeat,
    };
  }
  return { descriptor, owner: UNCLAIMED_OWNER, state: 'offline', state_reason: "waiting for the device's first heartbeat", ...heartbeat };
}
