// What retrieval needs from a sentence embedder. Vectors come back L2-normalised so cosine similarity
// is a dot product and vectors from one embedder are comparable across restarts.

export interface Embedder {
  /** Stable name recorded in the Chroma collection metadata; a different name means re-index. */
  readonly name: string;
  /** Known up front for fixed models; otherwise learned from the first embedding. */
  dimension(): number | undefined;
  embed(texts: string[]): Promise<number[][]>;
}

export function normalise(vector: ArrayLike<number>): number[] {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!;
  const norm = Math.sqrt(sum) || 1;
  return Array.from(vector, (v) => v / norm);
}
