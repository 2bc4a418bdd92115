// GET /api/openapi.json: the OpenAPI 3.1 document of the HTTP API (public: the server whitelists it),
// produced from the routes the server has (see ../openapi.ts).
import type { FastifyInstance } from 'fastify';
import type { JsonObject } from '../../protocol/types.js';
import { openApiDocument, type OpenApiOptions } from '../openapi.js';

export function registerOpenApiRoute(app: FastifyInstance, options: OpenApiOptions = {}): void {
  // Built on first request: by then every route is registered, and none is added at run time.
  let document: JsonObject | undefined;
  app.get('/api/openapi.json', async () => {
    document ??= openApiDocument(app, options);
    return document;
  });
}
