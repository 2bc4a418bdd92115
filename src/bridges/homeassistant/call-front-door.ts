// The MQTT front door for callers that speak MQTT rather than HTTP (Home Assistant automations,
// Node-RED, scripts): a call on homeclaw/call/<plugin_id>/<capability_id> with {request_id, parameters,
// user_id?} goes through the same dispatcher as the HTTP run route (validation, queues, deadlines,
// per-user policy) and its PluginResult comes back on homeclaw/call_result/<request_id>. Who may call is
// the broker's ACL (role "caller", or anonymous on a loopback-only broker); who a call acts for is the
// caller's binding (src/access/caller-bindings.ts), never the payload alone. Bad input is answered on the
// result topic when the request_id can be read, on call_result/_invalid otherwise, and logged; nothing
// here throws into the bus.
import type { CallerDecision, CallerInput } from '../../access/caller-bindings.js';
import type { CoreBus, IncomingMessage, PublisherIdentity } from '../../bus/core-bus.js';
import type { DispatcherApi } from '../../dispatch/dispatcher-api.js';
import type { Logger } from '../../log.js';
import { isPluginId } from '../../protocol/ids.js';
import { filters, parseTopic, topics } from '../../protocol/topics.js';
import type { CallRejection, CallRequest, ErrorCode, PluginResult } from '../../protocol/types.js';
import { parseJsonPayload, validatePayload } from '../../protocol/validate.js';
import { formatIssues } from '../../kit/format-issues.js';
import { subscribeTracked } from '../../bus/tracked-subscription.js';

export interface CallFrontDoorDeps {
  bus: CoreBus;
  dispatcher: DispatcherApi;
  log: Logger;
  /** Larger payloads are refused before parsing (broker.max_payload_bytes). */
  max_payload_bytes: number;
  /** Whether the publisher may act as the call's user_id, and which user a call without one acts as. */
  authorizeCaller: (input: CallerInput) => CallerDecision;
}

export interface CallFrontDoor {
  /** Unsubscribes and waits for the calls still running. */
  stop(): Promise<void>;
}

/** The channel name plugins and policy see for calls made through this door. */
export const CALL_CHANNEL = 'mqtt-call';

const FRONT_DOOR_REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
const CAPABILITY_ID = /^[A-Za-z0-9_-]{1,64}$/;

export async function attachCallFrontDoor(deps: CallFrontDoorDeps): Promise<CallFrontDoor> {
  const { bus, dispatcher } = deps;
  const log = deps.log.child({ room: 'bridges', component: 'call-front-door' });

  // Any caller may subscribe to any request id (and to _invalid): an answer goes only to whoever asked.
  const publish = async (topic: string, payload: PluginResult | CallRejection, caller: PublisherIdentity | undefined): Promise<void> => {
    try {
      await bus.publish(topic, JSON.stringify(payload), { qos: 1, ...(caller ? { onlyTo: caller } : {}) });
    } catch (err) {
      log.warn({ err: (err as Error).message, topic }, 'could not publish a call result');
    }
  };

  const rejectUnreadable = (message: IncomingMessage, error: string): Promise<void> => {
    log.warn({ topic: message.topic, client_id: message.publisher?.clientId, error }, 'call refused: no readable request_id');
    return publish(topics.callResultInvalid(), { topic: message.topic, success: false, error, error_code: 'invalid_params' }, message.publisher);
  };

  const answerError = (
    caller: PublisherIdentity | undefined,
    requestId: string,
    pluginId: string,
    error: string,
    code: ErrorCode,
    problems?: { path: string; message: string }[],
  ): Promise<void> => {
    log.warn({ request_id: requestId, plugin_id: pluginId, error_code: code, error }, 'call refused');
    return publish(
      topics.callResult(requestId),
      {
        request_id: requestId,
        // The result schema needs a plugin id even when the topic's was not one.
        plugin_id: isPluginId(pluginId) ? pluginId : 'invalid',
        success: false,
        error,
        error_code: code,
        ...(problems ? { metadata: { problems } } : {}),
      },
      caller,
    );
  };

  async function handle(message: IncomingMessage): Promise<void> {
    const parsed = parseTopic(message.topic);
    const pluginId = parsed?.kind === 'call' ? (parsed.param ?? '') : '';
    const capabilityId = parsed?.capability ?? '';
    const body = parseJsonPayload(message.payload, deps.max_payload_bytes);
    if (!body.ok) return rejectUnreadable(message, `Invalid call: ${body.errors.map((e) => e.message).join('; ')}`);
    const requestId = body.value.request_id;
    if (typeof requestId !== 'string' || !FRONT_DOOR_REQUEST_ID.test(requestId)) {
      return rejectUnreadable(
        message,
        `Invalid call: request_id must be a string matching ${FRONT_DOOR_REQUEST_ID.source} (got ${JSON.stringify(requestId ?? null)})`,
      );
    }
    if (message.retain) {
      return answerError(
        message.publisher,
        requestId,
        pluginId,
        'retained calls are never executed (a retained call would run again on every reconnect); publish without the retain flag',
        'invalid_params',
      );
    }
    const validated = validatePayload('call', body.value);
    if (!validated.ok) {
      const problems = validated.errors.map((e) => ({ path: e.path, message: e.message }));
      return answerError(message.publisher, requestId, pluginId, `Invalid call: ${formatIssues(problems, { root: 'omit' })}`, 'invalid_params', problems);
    }
    if (!isPluginId(pluginId) || !CAPABILITY_ID.test(capabilityId)) {
      return answerError(
        message.publisher,
        requestId,
        pluginId,
        `no plugin "${pluginId}" with capability "${capabilityId}": the topic must be ${topics.call('<plugin_id>', '<capability_id>')}`,
        'not_found',
      );
    }
    const call: CallRequest = validated.value;
    const caller = deps.authorizeCaller({
      ...(call.user_id !== undefined ? { user_id: call.user_id } : {}),
      ...(message.publisher ? { publisher: message.publisher } : {}),
    });
    if (!caller.allowed) {
      log.warn(
        { client_id: message.publisher?.clientId, username: message.publisher?.username, claimed: call.user_id },
        'call refused: the caller may not act as that user',
      );
      return answerError(message.publisher, requestId, pluginId, caller.reason, 'forbidden');
    }
    const result = await dispatcher.invoke({
      plugin_id: pluginId,
      capability_id: capabilityId,
      parameters: call.parameters ?? {},
      context: { channel_name: CALL_CHANNEL, channel_type: 'mqtt', ...(caller.user_id !== undefined ? { user_id: caller.user_id } : {}) },
      // An MQTT 5 caller's trace context (user property traceparent): the invocation joins its trace.
      ...(typeof message.properties?.userProperties?.traceparent === 'string' ? { traceparent: message.properties.userProperties.traceparent } : {}),
    });
    log.info(
      {
        request_id: requestId,
        invocation_id: result.request_id,
        plugin_id: pluginId,
        capability_id: capabilityId,
        user_id: caller.user_id,
        success: result.success,
        error_code: result.error_code,
      },
      'call answered',
    );
    // The caller correlates by its own request_id; the dispatcher's id stays findable in the logs.
    await publish(
      topics.callResult(requestId),
      { ...result, request_id: requestId, metadata: { ...(result.metadata ?? {}), invocation_id: result.request_id } },
      message.publisher,
    );
  }

  return subscribeTracked(bus, filters.call, handle, (err, message) => log.error({ err, topic: message.topic }, 'call handling failed'));
}
