// The query string of GET /api/plugins/search: it validates the request and is what the OpenAPI document
// shows. A k above the maximum is not refused: the search clamps it and says so in its warnings.
import { type Static, Type } from '@sinclair/typebox';
import { MAX_K } from '../../retrieval/search-request.js';

export const SearchQueryString = Type.Object({
  q: Type.String({ description: 'What the plugin should do.' }),
  k: Type.Optional(Type.Integer({ minimum: 1, description: `How many plugins (1-${MAX_K}; larger is clamped).` })),
  include_unroutable: Type.Optional(
    Type.Unsafe<'true' | '1' | 'false' | '0'>({ type: 'string', enum: ['true', '1', 'false', '0'], description: 'Include stale and offline plugins.' }),
  ),
});
export type SearchQueryString = Static<typeof SearchQueryString>;
