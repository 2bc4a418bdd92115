// Hybrid ranking: BM25 and dense similarity live on different scales, so each is turned into per-query
// z-scores over the candidate set and the two are mixed with configured weights.

export interface FusionInput {
  bm25: Map<string, number>;
  /** Dense similarity of the retrieved plugins; plugins not retrieved get the lowest retrieved value. */
  dense: Map<string, number> | undefined;
  weights: { bm25: number; dense: number };
}

export interface FusedScore {
  id: string;
  score: number;
  bm25: number;
  dense?: number;
}

function zScores(values: number[]): number[] {
  if (values.length === 0) return [];
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const variance = values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length;
  const sd = Math.sqrt(variance);
  // All equal (one candidate, identical texts): no evidence either way.
  if (sd < 1e-12) return values.map(() => 0);
  return values.map((v) => (v - mean) / sd);
}

/** Fused scores, best first; ties broken by id so identical plugins rank deterministically. */
export function fuse({ bm25, dense, weights }: FusionInput): FusedScore[] {
  const ids = new Set<string>(bm25.keys());
  if (dense) for (const id of dense.keys()) ids.add(id);
  const list = [...ids];
  const bm25Values = list.map((id) => bm25.get(id) ?? 0);
  let fused: number[];
  let denseValues: number[] | undefined;
  if (dense && dense.size > 0) {
    const floor = Math.min(...dense.values());
    denseValues = list.map((id) => dense.get(id) ?? floor);
    const zb = zScores(bm25Values);
    const zd = zScores(denseValues);
    fused = list.map((_, i) => weights.bm25 * zb[i]! + weights.dense * zd[i]!);
  } else {
    fused = bm25Values;
  }
  return list
    .map((id, i) => {
      const entry: FusedScore = { id, score: fused[i]!, bm25: bm25Values[i]! };
      if (denseValues) entry.dense = denseValues[i]!;
      return entry;
    })
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
