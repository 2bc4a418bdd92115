// Turns text into BM25 terms: lower-cased Unicode words, English stop words dropped, Porter stems.
// Non-Latin words (CJK, Cyrillic, ...) are kept unstemmed so they still match themselves.
import { stemmer } from 'stemmer';
import { eng as englishStopWords } from 'stopword';

const STOP_WORDS = new Set(englishStopWords.map((w) => w.toLowerCase()));
const WORD = /[\p{L}\p{N}]+/gu;
const ASCII_WORD = /^[a-z]+$/;

export function tokenize(text: string): string[] {
  const terms: string[] = [];
  for (const match of text.toLowerCase().matchAll(WORD)) {
    const word = match[0];
    if (STOP_WORDS.has(word)) continue;
    if (word.length === 1 && ASCII_WORD.test(word)) continue;
    terms.push(ASCII_WORD.test(word) ? stemmer(word) : word);
  }
  return terms;
}

/** Splits identifiers such as `get_weather` or `stockPrice` into words before tokenising. */
export function splitIdentifier(text: string): string {
  return text.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/[_\-./]+/g, ' ');
}
