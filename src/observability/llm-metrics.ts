// LLM metrics: every chat request the Core makes (tool loop rounds and post-processing alike), its
// duration, why it failed, and the tokens the endpoint says it used. The client is wrapped, so the
// conversation room keeps calling complete() and knows nothing of metrics.
import { Counter, Histogram, type Registry } from 'prom-client';
import { LlmError, type LlmClient, type LlmFailure } from '../conversation/llm-client.js';

/** Seconds: a local model answers in tenths of a second, a large one on a CPU in a minute or more. */
export const LLM_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120];

export class LlmMetrics {
  private readonly requests: Counter;
  private readonly errors: Counter<'reason'>;
  private readonly tokens: Counter<'kind'>;
  private readonly duration: Histogram;

  constructor(registry: Registry) {
    const registers = [registry];
    this.requests = new Counter({ name: 'homeclaw_llm_requests_total', help: 'Chat completion requests sent to the LLM, failed ones included.', registers });
    this.errors = new Counter({
      name: 'homeclaw_llm_errors_total',
      help: 'LLM requests that failed, by reason: timeout, connection, http_4xx, http_5xx, invalid_response.',
      labelNames: ['reason'],
      registers,
    });
    this.tokens = new Counter({
      name: 'homeclaw_llm_tokens_total',
      help: 'Tokens the LLM endpoint reported (its usage field), by kind: prompt or completion.',
      labelNames: ['kind'],
      registers,
    });
    this.duration = new Histogram({
      name: 'homeclaw_llm_request_duration_seconds',
      help: 'Duration of LLM requests, failed ones included.',
      buckets: LLM_BUCKETS,
      registers,
    });
    // Both kinds from the start, so a rate over tokens never starts from a missing series.
    this.tokens.inc({ kind: 'prompt' }, 0);
    this.tokens.inc({ kind: 'completion' }, 0);
  }

  /** The same client, counted. */
  meter(client: LlmClient): LlmClient {
    const metrics = this;
    return {
      baseUrl: client.baseUrl,
      model: client.model,
      async complete(messages, tools) {
        metrics.requests.inc();
        const startedAt = performance.now();
        try {
          const reply = await client.complete(messages, tools);
          if (reply.usage) {
            metrics.tokens.inc({ kind: 'prompt' }, Math.max(0, reply.usage.prompt_tokens));
            metrics.tokens.inc({ kind: 'completion' }, Math.max(0, reply.usage.completion_tokens));
          }
          return reply;
        } catch (error) {
          const reason: LlmFailure = error instanceof LlmError ? error.failure : 'invalid_response';
          metrics.errors.inc({ reason });
          throw error;
        } finally {
          metrics.duration.observe((performance.now() - startedAt) / 1000);
        }
      },
    };
  }
}
