// Who a call is made for comes from the caller's credential, never from its parameters. A parameter bound
// to the system key user_id tells a plugin whose data to touch: a reminder list, a note, an order. When a
// front door made the call for a user (a user token, an MCP session, a bound channel), such a parameter
// takes that user, whatever the caller put there; only a call made for no user (the admin token, the CLI)
// names it itself. A parameter bound to channel stays the caller's choice (an MCP client may ask for a
// reminder on the kitchen tablet); the notifier decides whether that channel may carry the user's message.
import type { CapabilitySpec, JsonObject } from '../protocol/types.js';
import type { InvocationContext } from './dispatcher-api.js';

/**
 * The parameters with every user_id-bound one set from the context, or the same object when there is
 * nothing to set (most capabilities have none).
 */
export function withCallerIdentity(capability: Pick<CapabilitySpec, 'parameters'>, parameters: JsonObject, context: InvocationContext | undefined): JsonObject {
  const userId = context?.user_id;
  if (userId === undefined || userId === '') return parameters;
  let bound: JsonObject | undefined;
  for (const parameter of capability.parameters) {
    if (parameter.system_key !== 'user_id' || parameters[parameter.name] === userId) continue;
    bound ??= Object.assign({}, parameters);
    bound[parameter.name] = userId;
  }
  return bound ?? parameters;
}
