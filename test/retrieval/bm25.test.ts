// BM25, its tokenizer and the z-score fusion, in process.
import { describe, expect, it } from 'vitest';
import { Bm25Index } from '../../src/retrieval/bm25.js';
import { fuse } from '../../src/retrieval/fusion.js';
import { checkSearchRequest, MAX_QUERY_CHARS } from '../../src/retrieval/search-request.js';
import { splitIdentifier, tokenize } from '../../src/retrieval/tokenize.js';

describe('tokenize', () => {
  it('stems, drops stop words and keeps non-Latin words', () => {
    expect(tokenize('Turning ON the Lights in the kitchen!')).toEqual(['turn', 'light', 'kitchen']);
    expect(tokenize('明天 下雨 Zürich 🌧️')).toEqual(['明天', '下雨', 'zürich']);
    expect(tokenize('   ')).toEqual([]);
    expect(splitIdentifier('get_weatherForecast')).toBe('get weather Forecast');
    // camelCase / PascalCase split on both sides, so a query naming "FinanceNews" meets "finance news".
    expect(tokenize('FinanceNews HTTPServer mp3')).toEqual(tokenize('finance news HTTP server mp3'));
    expect(tokenize('FinanceNews')).toEqual(['financ', 'new']);
  });
});

describe('Bm25Index', () => {
  it('ranks by matching stems and forgets deleted documents', () => {
    const index = new Bm25Index();
    index.set('lights', 'Switch the lights on and off');
    index.set('weather', 'Weather forecast for your city');
    index.set('music', 'Play music on the speakers');
    const scores = index.score('switching light');
    expect([...scores.keys()]).toEqual(['lights']);
    index.delete('lights');
    expect(index.score('switching light').size).toBe(0);
    expect(index.size).toBe(2);
    index.set('weather', 'Rain radar');
    expect(index.score('forecast').size).toBe(0);
    expect(index.score('rain').get('weather')).toBeGreaterThan(0);
  });
});

describe('fuse', () => {
  it('mixes per-query z-scores and breaks ties by id', () => {
    const fused = fuse({
      bm25: new Map([
        ['a', 10],
        ['b', 0],
      ]),
      dense: new Map([
        ['b', 0.9],
        ['c', 0.1],
      ]),
      weights: { bm25: 0.3, dense: 0.7 },
    });
    expect(fused.map((f) => f.id)).toEqual(['b', 'a', 'c']);
    expect(fused.find((f) => f.id === 'a')?.dense).toBe(0.1); // not retrieved: the lowest retrieved similarity
    const ties = fuse({
      bm25: new Map([
        ['y', 1],
        ['x', 1],
      ]),
      dense: undefined,
      weights: { bm25: 0.3, dense: 0.7 },
    });
    expect(ties.map((f) => f.id)).toEqual(['x', 'y']);
  });
});

describe('checkSearchRequest', () => {
  it('cuts long queries without splitting an emoji and validates k', () => {
    const long = `${'a'.repeat(MAX_QUERY_CHARS - 1)}😀${'b'.repeat(100)}`;
    const checked = checkSearchRequest(long, undefined, 5);
    expect(checked).toMatchObject({ ok: true, truncated: true, k: 5 });
    if (checked.ok) expect(checked.query).toBe('a'.repeat(MAX_QUERY_CHARS - 1));
    expect(checkSearchRequest('x', '7', 5)).toMatchObject({ ok: true, k: 7 });
    expect(checkSearchRequest('x', 'NaN', 5)).toMatchObject({ ok: false });
    expect(checkSearchRequest(42, 3, 5)).toEqual({ ok: false, error: 'query must be a string' });
  });
});

describe('pluginDenseScores', () => {
  it('scores a plugin by 0.7·max + 0.3·mean of its name and plugin documents, or a better example', async () => {
    const { pluginDenseScores } = await import('../../src/retrieval/retrieval.js');
    const scores = pluginDenseScores([
      { plugin_id: 'a', kind: 'name', similarity: 0.8 },
      { plugin_id: 'a', kind: 'plugin', similarity: 0.4 },
      { plugin_id: 'b', kind: 'plugin', similarity: 0.5 },
      { plugin_id: 'b', kind: 'example', similarity: 0.9 },
      { plugin_id: 'c', kind: 'plugin', similarity: 0.6 },
    ]);
    expect(scores.get('a')).toBeCloseTo(0.7 * 0.8 + 0.3 * 0.6, 10);
    expect(scores.get('b')).toBeCloseTo(0.9, 10);
    // c's name document was not returned: it counts at the lowest similarity seen (0.4).
    expect(scores.get('c')).toBeCloseTo(0.7 * 0.6 + 0.3 * 0.5, 10);
  });
});
