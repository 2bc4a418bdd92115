// GET /api/plugins/:id/capabilities (admin): each capability of a plugin with the JSON Schema its
// parameters are validated against (the one `POST /v1/plugins/:id/tools/:tool/run` checks) and whether a
// call must be confirmed (the descriptor's requires_confirmation or policy.require_confirmation), so a
// client can build a form for it and ask before it runs.
import type { FastifyInstance } from 'fastify';
import { capabilityInputSchema } from '../../protocol/descriptor/json-schema.js';
import type { CapabilitySpec, JsonObject } from '../../protocol/types.js';
import type { RegistryApi } from '../../registry/registry-api.js';
import { sendError } from '../errors.js';
import { validatedRoute } from '../route-validation.js';
import { PluginParams } from './plugins-schema.js';

export interface PluginCapabilityRoutesDeps {
  registry: RegistryApi;
  /** Whether a call to this capability needs "confirmed": true (descriptor or policy). */
  requiresConfirmation: (pluginId: string, capability: CapabilitySpec) => boolean;
}

export function registerPluginCapabilityRoutes(app: FastifyInstance, deps: PluginCapabilityRoutesDeps): void {
  const route = validatedRoute({ params: PluginParams }, 'invalid plugin id');
  app.get<{ Params: PluginParams }>('/api/plugins/:id/capabilities', route, async (request, reply) => {
    const record = deps.registry.get(request.params.id);
    if (!record) return sendError(reply, 404, `no plugin with id "${request.params.id}" is registered`);
    const pluginId = record.descriptor.id;
    const capabilities: JsonObject[] = record.descriptor.capabilities.map((capability) => ({
      id: capability.id,
      name: capability.name,
      description: capability.description,
      input_schema: capabilityInputSchema(capability),
      ...(capability.output_schema ? { output_schema: capability.output_schema } : {}),
      ...(capability.output_description ? { output_description: capability.output_description } : {}),
      requires_confirmation: deps.requiresConfirmation(pluginId, capability),
    }));
    return { plugin_id: pluginId, state: record.state, capabilities };
  });
}
