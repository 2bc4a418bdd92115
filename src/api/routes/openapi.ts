// GET /api/openapi.json: the OpenAPI 3.1 document of the HTTP API (public: the server whitelists it).
import type { FastifyInstance } from 'fastify';
import type { JsonObject } from '../../protocol/types.js';
import { buildOpenApiDocument, type OpenApiOptions } from '../openapi.js';

export function registerOpenApiRoute(app: FastifyInstance, options: OpenApiOptions = {}): void {
  // Built on first request: the document is derived from files and constants that never change at run time.
  let document: JsonObject | undefined;
  app.get('/api/openapi.json', async () => {
    document ??= buildOpenApiDocument(options);
    return document;
  });
}
