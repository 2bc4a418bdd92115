// Calibration of conversation.no_llm_threshold against the REAL retrieval scores of the shipped
// built-ins: BM25 only (retrieval disabled) and hybrid (real Chroma + USE-lite). Everyday requests must
// reach their plugin; unrelated messages must get the suggestion list, never a plugin's dialogue.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/defaults.js';
import { chooseNoLlmRoute } from '../../src/conversation/no-llm-router.js';
import { startChroma, type TestChroma } from '../helpers/chroma.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { ensureBuilt, SHIPPED_PLUGINS_DIR } from './helpers.js';

const REQUESTS: Record<string, string[]> = {
  time: ['what time is it?', "what's the date today?", 'what day is it', 'time in Tokyo', 'is it morning in Sydney', 'tell me the time'],
  buy: [
    'buy me some milk',
    'I need to buy batteries',
    'order some bread',
    'get me coffee delivered',
    'purchase a new toothbrush',
    'we are out of butter, buy some',
  ],
  weather: [
    'will it rain tomorrow?',
    "what's the weather in Paris",
    'do I need an umbrella',
    'how cold is it outside',
    'forecast for the weekend',
    'is it sunny in Rome',
  ],
  notes: ['take a note: call mum', 'remember that the wifi password is 1234', 'show my notes', 'write down buy a gift', 'find my note about the dentist'],
  reminders: [
    'remind me at 7 pm to call mom',
    'every Monday at 8 remind me to take out the bins',
    'remind me in 10 minutes to check the oven',
    'what reminders do I have?',
    'cancel the reminder about the bins',
  ],
};
const UNRELATED = [
  'hello',
  'hi there',
  'thanks',
  'how are you',
  'who won the football yesterday',
  'play some music',
  'turn on the kitchen lights',
  'what is the meaning of life',
  'good night',
  'sing me a song',
];

const threshold = DEFAULT_CONFIG.conversation.no_llm_threshold;

async function decide(core: TestCore, text: string): Promise<string | null> {
  const response = await core.ctx.retrieval.search(text, { k: core.ctx.config.retrieval.top_k });
  const decision = chooseNoLlmRoute(response, threshold);
  return decision.kind === 'route' ? decision.record.descriptor.id : null;
}

beforeAll(async () => {
  await ensureBuilt();
}, 120_000);

describe('no-LLM threshold, BM25 only', () => {
  let core: TestCore;
  beforeAll(async () => {
    core = await startTestCore({ pluginsDir: SHIPPED_PLUGINS_DIR });
  });
  afterAll(async () => core?.cleanup());

  it('routes every everyday request to its plugin', async () => {
    for (const [plugin, texts] of Object.entries(REQUESTS)) {
      for (const text of texts) expect([text, await decide(core, text)]).toEqual([text, plugin]);
    }
  });

  it('routes no unrelated message', async () => {
    for (const text of UNRELATED) expect([text, await decide(core, text)]).toEqual([text, null]);
  });

  it('the threshold is the raw BM25 score, the same scale as the search API reports', async () => {
    const response = await core.ctx.retrieval.search('is it sunny in Rome', { k: 5 });
    expect(response.mode).toBe('bm25');
    expect(response.hits[0]!.bm25_score).toBeGreaterThanOrEqual(threshold);
  });
});

describe('no-LLM threshold, hybrid (real Chroma + USE-lite)', () => {
  let chroma: TestChroma;
  let core: TestCore;
  beforeAll(async () => {
    chroma = await startChroma();
    core = await startTestCore({ pluginsDir: SHIPPED_PLUGINS_DIR, overrides: { retrieval: { enabled: true, chroma: { url: chroma.url } } } });
    const deadline = Date.now() + 60_000;
    while (core.ctx.retrieval.status().state !== 'ok') {
      if (Date.now() > deadline) throw new Error(`hybrid retrieval not ready: ${JSON.stringify(core.ctx.retrieval.status())}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }, 90_000);
  afterAll(async () => {
    await core?.cleanup();
    await chroma?.stop();
  });

  it('routes every everyday request to its plugin', async () => {
    for (const [plugin, texts] of Object.entries(REQUESTS)) {
      for (const text of texts) expect([text, await decide(core, text)]).toEqual([text, plugin]);
    }
  });

  it('routes no unrelated message, although their fused z-scores are high', async () => {
    const fused = await core.ctx.retrieval.search('good night', { k: 5 });
    expect(fused.mode).toBe('hybrid');
    // The reason the router does not use hit.score: relative z-scores crown the best of bad matches.
    expect(fused.hits[0]!.score).toBeGreaterThan(0.5);
    for (const text of [...UNRELATED, 'tell me a joke']) expect([text, await decide(core, text)]).toEqual([text, null]);
  });
});
