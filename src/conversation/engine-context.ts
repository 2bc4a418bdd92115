// What the parts of the conversation engine share: its dependencies, its clock and the sessions'
// recent dialogue. One explicit object, handed to the pending dialogue, the slash commands and the tool
// executor, instead of a closure they all reach into.
import type { PluginRecord } from '../registry/record.js';
import type { SearchResponse } from '../retrieval/search-api.js';
import type { ConversationEngineDeps } from './engine-types.js';
import type { SessionHistory } from './sessions.js';

export interface EngineContext {
  readonly deps: ConversationEngineDeps;
  readonly now: () => Date;
  readonly history: SessionHistory;
}

/** Only plugins the user may reach are ever offered (prompt, find_plugins, no-LLM routing). */
export async function searchReachable(ctx: EngineContext, query: string, userId: string): Promise<SearchResponse> {
  const access = ctx.deps.access;
  try {
    return await ctx.deps.retrieval.search(query, {
      k: ctx.deps.settings.top_k,
      ...(access ? { filter: (record: PluginRecord) => access.mayReachPlugin(userId, record) } : {}),
    });
  } catch (error) {
    ctx.deps.log.warn({ err: error }, 'retrieval failed; continuing without plugins');
    return { query, k: ctx.deps.settings.top_k, hits: [], mode: 'bm25' };
  }
}
