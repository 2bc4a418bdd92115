// Who a call is made for comes from the caller's credential, never from its parameters. A parameter bound
// to the system key user_id (or channel) tells a plugin whose data to touch: a reminder list, a note, an
// order. When a front door made the call for a user (a user token, an MCP session, a bound channel), those
// parameters take that user and the call's channel, whatever the caller put there; only a call made for
// no user (the admin token, the CLI) names them itself.
import type { CapabilitySpec, JsonObject } from '../protocol/types.js';
import type { InvocationContext } from './dispatcher-api.js';

/**
 * The parameters with every identity-bound one set from the context, or the same object when there is
 * nothing to set (most capabilities have none).
 */
export function withCallerIdentity(capability: Pick<CapabilitySpec, 'parameters'>, parameters: JsonObject, context: InvocationContext | undefined): JsonObject {
  const userId = context?.user_id;
  if (userId === undefined || userId === '') return parameters;
  let bound: JsonObject | undefined;
  for (const parameter of capability.parameters) {
    const value = parameter.system_key === 'user_id' ? userId : parameter.system_key === 'channel' ? context?.channel_name : undefined;
    if (value === undefined || value === '' || parameters[parameter.name] === value) continue;
    bound ??= Object.assign({}, parameters);
    bound[parameter.name] = value;
  }
  return bound ?? parameters;
}
