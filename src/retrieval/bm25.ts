// Okapi BM25 over in-memory documents keyed by id, with postings lists kept up to date on every
// change so a query touches only the documents that contain its terms.
import { tokenize } from './tokenize.js';

export class Bm25Index {
  private readonly docLengths = new Map<string, number>();
  private readonly docTerms = new Map<string, Map<string, number>>();
  private readonly postings = new Map<string, Map<string, number>>();
  private totalLength = 0;

  constructor(
    private readonly k1 = 1.2,
    private readonly b = 0.75,
  ) {}

  get size(): number {
    return this.docLengths.size;
  }

  set(id: string, text: string): void {
    this.delete(id);
    const termFreq = new Map<string, number>();
    const terms = tokenize(text);
    for (const term of terms) termFreq.set(term, (termFreq.get(term) ?? 0) + 1);
    for (const [term, tf] of termFreq) {
      let posting = this.postings.get(term);
      if (!posting) {
        posting = new Map();
        this.postings.set(term, posting);
      }
      posting.set(id, tf);
    }
    this.docTerms.set(id, termFreq);
    this.docLengths.set(id, terms.length);
    this.totalLength += terms.length;
  }

  delete(id: string): void {
    const termFreq = this.docTerms.get(id);
    if (!termFreq) return;
    for (const term of termFreq.keys()) {
      const posting = this.postings.get(term);
      posting?.delete(id);
      if (posting && posting.size === 0) this.postings.delete(term);
    }
    this.totalLength -= this.docLengths.get(id) ?? 0;
    this.docTerms.delete(id);
    this.docLengths.delete(id);
  }

  has(id: string): boolean {
    return this.docLengths.has(id);
  }

  /** Scores of every document containing at least one query term (absent = 0). */
  score(query: string): Map<string, number> {
    const scores = new Map<string, number>();
    const n = this.docLengths.size;
    const avgLength = n ? this.totalLength / n : 1;
    for (const term of new Set(tokenize(query))) {
      const posting = this.postings.get(term);
      if (!posting) continue;
      const df = posting.size;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      for (const [id, tf] of posting) {
        const length = this.docLengths.get(id) ?? 0;
        const norm = tf + this.k1 * (1 - this.b + (this.b * length) / (avgLength || 1));
        scores.set(id, (scores.get(id) ?? 0) + (idf * tf * (this.k1 + 1)) / norm);
      }
    }
    return scores;
  }
}
