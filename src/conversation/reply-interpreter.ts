// Reads the user's next message against a pending call (one waiting for an answer): cancel, confirm (possibly with
// corrections), values for the missing/uncertain parameters, or something unrelated. Deliberately
// conservative: a reply is only taken as an answer when its form is unmistakable, because the cost of
// misreading "what's the weather in Paris?" as a delivery address is a wrong order, while the cost of
// "unrelated" is one more normal turn.
//
// Accepted forms:
//   cancel      — the whole message is "cancel", "never mind", "stop", "forget it", "abort", "no", "nope"
//                 (optionally with "please", "it", "that", "the order"). A bare "no" cancels: after
//                 "is that correct?" it means the shown values are wrong, and starting over is safer
//                 than guessing — unless the single missing value is a boolean, where "no" is the answer.
//   confirm     — the message starts with "yes", "yep", "ok", "correct", "sure", "confirm", "that's right"…;
//                 anything after it must itself parse as values ("yes, but address=456 Oak Ave").
//   values      — `key=value` / `key: value` pairs (quoted values allowed), "my phone is 555-1234",
//                 "phone 555-1234" (at the start or after a comma); keys are parameter names, their
//                 spaced forms ("contact name") or profile keys ("name" for contact_name);
//                 a bare answer when exactly one value is missing; comma-separated answers in the order
//                 of the missing list when the count matches exactly; after a correction lead ("actually
//                 use …", "make it …") and with nothing missing, one value per uncertain parameter, in order
//                 ("actually use 456 Oak Ave" when only the address awaits confirmation).
//   unrelated   — everything else, including questions and requests.
import type { CapabilitySpec, JsonObject, ParameterSpec } from '../protocol/types.js';
import type { PendingCall, ReplyInterpretation, ReplyInterpreter } from './resolver-api.js';

/** Longer replies are not answers to a short question; also keeps regex work bounded on 1 MB messages. */
const MAX_REPLY_CHARS = 1000;
const MAX_BARE_WORDS = 15;

const CANCEL =
  /^(?:(?:ok(?:ay)?|oh|please|just|no)[\s,]+)?(?:cancel|never\s?mind|nvm|stop|abort|forget\s+(?:it|about\s+it)|no|nope|no\s+thanks?(?:\s+you)?)(?:\s+(?:it|that|this|the\s+order|the\s+request|everything))?(?:[\s,]+please)?$/i;

const AFFIRM_WORDS = [
  "that's correct",
  'that is correct',
  'thats correct',
  "that's right",
  'that is right',
  'thats right',
  'yes please',
  'go ahead',
  'sounds good',
  'looks good',
  'all good',
  'confirmed',
  'confirm',
  'correct',
  'okay',
  'yeah',
  'yes',
  'yep',
  'yup',
  'sure',
  'ok',
  'y',
];
const AFFIRM = new RegExp(`^(?:${AFFIRM_WORDS.map(escapeRegex).join('|')})(?=$|[\\s,.;:!-])`, 'i');
/** Words that may follow "yes" without carrying a value. */
const AFFIRM_FILLER = /^(?:[\s,.;:!-]|but|and|except|however|though|also|please|thanks|thank\s+you|go\s+ahead|do\s+it)*/i;
const LEADING_FILLER =
  /^(?:[\s,.;:!-]|actually|oh|ok|okay|sorry|wait|hmm|um|and|also|so|well|then|yes|please|but|instead|oops|correction|set|update|change|use)*/i;

/** A reply that starts like one of these and runs on is a new request or a question, not a value. */
const QUESTION_STARTERS = new Set([
  'what',
  "what's",
  'whats',
  'how',
  "how's",
  'when',
  'where',
  "where's",
  'who',
  "who's",
  'why',
  'which',
  'can',
  'could',
  'would',
  'will',
  'should',
  'shall',
  'do',
  'does',
  'did',
  'is',
  'are',
  'am',
  'was',
  'were',
  'tell',
  'show',
  'play',
  'turn',
  'switch',
  'set',
  'remind',
  'find',
  'search',
  'open',
  'call',
  'buy',
  'order',
  'please',
  'hey',
  'hi',
  'hello',
  'thanks',
  'thank',
  'give',
  'let',
  "let's",
  'i',
  "i'd",
  'help',
]);
const CORRECTION_LEAD =
  /^(?:(?:no|nope|actually|sorry|oops|wait|instead|correction)\b[\s,.!:;-]*)*(?:(?:please\s+)?(?:use|make\s+it|change\s+(?:it|that)\s+to|it\s+should\s+be|should\s+be|send\s+(?:it\s+)?to|deliver\s+(?:it\s+)?to)\s+)?/i;
const ANSWER_LEAD = /^(?:i'm|i\s+am|it's|it\s+is|its|this\s+is|that's|call\s+me)\s+/i;
const QUOTES: Record<string, string> = { '"': '"', "'": "'", '“': '”', '‘': '’' };

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function stripTrailing(text: string): string {
  return text.replace(/(?:[\s,;]+and)?[\s,;.!]+$/i, '').trim();
}

interface KeyPattern {
  /** alias (lowercase) → parameter name */
  aliases: Map<string, string>;
  /** `key = value`, `key: value`, `my key is value` anywhere after a separator. */
  assigned: RegExp;
  /** `key value` only at the start or after a comma/semicolon/"and". */
  leading: RegExp;
}

interface Marker {
  name: string;
  start: number;
  valueStart: number;
}

function buildKeyPattern(capability: CapabilitySpec): KeyPattern {
  const aliases = new Map<string, string>();
  const add = (alias: string | undefined, name: string): void => {
    if (!alias) return;
    const key = alias.toLowerCase().replace(/_/g, ' ').trim();
    if (key !== '' && !aliases.has(key)) aliases.set(key, name);
  };
  // Own names first, so a parameter named "name" wins over another's profile_key "name".
  for (const p of capability.parameters) add(p.name, p.name);
  for (const p of capability.parameters) add(p.profile_key, p.name);
  const alternatives = [...aliases.keys()]
    .sort((a, b) => b.length - a.length)
    .map((alias) => escapeRegex(alias).replace(/ /g, '[\\s_]+'))
    .join('|');
  const key = `(?:(?:my|the|your|our)\\s+)?(${alternatives || '(?!)'})(?:\\s+(?:number|no\\.?))?`;
  return {
    aliases,
    assigned: new RegExp(`(?<=^|[\\s,;(])${key}\\s*(?:=|:|\\s+is\\s+|\\s+should\\s+be\\s+|\\s+will\\s+be\\s+)`, 'gi'),
    leading: new RegExp(`(?:^|(?<=[,;]\\s*)|(?<=\\sand\\s+))${key}\\s+(?=\\S)`, 'gi'),
  };
}

function findMarkers(text: string, pattern: KeyPattern): Marker[] {
  const markers: Marker[] = [];
  for (const regex of [pattern.assigned, pattern.leading]) {
    regex.lastIndex = 0;
    for (const match of text.matchAll(regex)) {
      const name = pattern.aliases.get(match[1]!.toLowerCase().replace(/[\s_]+/g, ' '));
      if (name) markers.push({ name, start: match.index, valueStart: match.index + match[0].length });
    }
  }
  markers.sort((a, b) => a.start - b.start || b.valueStart - a.valueStart);
  // Overlapping matches (the same key seen by both patterns) keep the earliest, longest one.
  const kept: Marker[] = [];
  for (const marker of markers) {
    const last = kept[kept.length - 1];
    if (last && marker.start < last.valueStart) continue;
    kept.push(marker);
  }
  return kept;
}

/** Values named by key in the text, or undefined when the text is not purely key/value assignments. */
function parseKeyed(text: string, pattern: KeyPattern): JsonObject | undefined {
  const markers = findMarkers(text, pattern);
  if (markers.length === 0) return undefined;
  const lead = text.slice(0, markers[0]!.start);
  if (lead.replace(LEADING_FILLER, '') !== '') return undefined;
  const values: JsonObject = {};
  let index = 0;
  while (index < markers.length) {
    const marker = markers[index]!;
    const rest = text.slice(marker.valueStart);
    const closing = QUOTES[rest[0] ?? ''];
    let value: string;
    let end: number;
    if (closing !== undefined && rest.indexOf(closing, 1) > 0) {
      const close = rest.indexOf(closing, 1);
      value = rest.slice(1, close);
      end = marker.valueStart + close + 1;
      // What follows a closing quote must be a separator or the next key, never stray text.
      const next = markers.findIndex((m, i) => i > index && m.start >= end);
      const between = text.slice(end, next === -1 ? text.length : markers[next]!.start);
      if (!/^[\s,;.!]*(?:and\s*)?$/i.test(between)) return undefined;
      index = next === -1 ? markers.length : next;
    } else {
      const next = markers[index + 1];
      end = next ? next.start : text.length;
      value = stripTrailing(text.slice(marker.valueStart, end));
      index += 1;
    }
    if (value.trim() === '') return undefined;
    values[marker.name] = value;
  }
  return values;
}

function looksLikeRequest(text: string): boolean {
  if (/\?\s*$/.test(text)) return true;
  const words = text.split(/\s+/).filter((word) => word !== '');
  if (words.length > MAX_BARE_WORDS) return true;
  const first = (words[0] ?? '').toLowerCase().replace(/[,.!:;]+$/, '');
  // Two words may be a name ("Will Smith"); more, starting like a question or command, is a request.
  return QUESTION_STARTERS.has(first) && words.length > 2;
}

function specsByName(capability: CapabilitySpec, names: string[]): ParameterSpec[] {
  return names.map((name) => capability.parameters.find((p) => p.name === name)).filter((p): p is ParameterSpec => p !== undefined);
}

/** Values without keys: the single missing value, the missing values in order, or one correction. */
function parseUnkeyed(text: string, pending: PendingCall): JsonObject | undefined {
  const leadMatch = CORRECTION_LEAD.exec(text);
  const hasCorrectionLead = leadMatch !== null && leadMatch[0].trim() !== '';
  const body = hasCorrectionLead ? text.slice(leadMatch[0].length) : text;
  if (body.trim() === '' || looksLikeRequest(body)) return undefined;

  let targets: string[];
  if (pending.missing.length > 0) {
    // A correction lead while values are missing is ambiguous: which value is being corrected?
    if (hasCorrectionLead) return undefined;
    targets = pending.missing;
  } else if (hasCorrectionLead && pending.uncertain.length > 0) {
    targets = pending.uncertain;
  } else {
    return undefined;
  }

  const parts = targets.length === 1 ? [body] : body.split(/\s*[,;]\s*/);
  if (parts.length !== targets.length) return undefined;
  const values: JsonObject = {};
  for (const [i, name] of targets.entries()) {
    const value = stripTrailing(parts[i]!.replace(ANSWER_LEAD, ''));
    if (value === '') return undefined;
    values[name] = value;
  }
  return values;
}

/** Words that open a correction ("actually use …", "instead …", "it should be …"). */
const CORRECTION_ATTEMPT =
  /^(?:(?:actually|instead|correction|sorry|oops|wait)\b|(?:please\s+)?(?:use|make\s+it|change\s+(?:it|that)\s+to|it\s+should\s+be|send\s+(?:it\s+)?to|deliver\s+(?:it\s+)?to)\s)/i;

/**
 * True when a reply the interpreter could not read still opens like a correction of the pending values.
 * The engine then asks which value to change instead of taking the normal path: leaving the old values
 * pending after the user tried to correct them would let a later "yes" place an order on a stale address.
 */
export function looksLikeCorrectionAttempt(text: string): boolean {
  const normalized = text.replace(/\s+/g, ' ').trim();
  if (normalized.length > MAX_REPLY_CHARS || !CORRECTION_ATTEMPT.test(normalized)) return false;
  const body = normalized.replace(CORRECTION_LEAD, '');
  return body.trim() !== '' && !looksLikeRequest(body);
}

export class PatternReplyInterpreter implements ReplyInterpreter {
  private readonly patterns = new WeakMap<CapabilitySpec, KeyPattern>();

  interpret(pending: PendingCall, capability: CapabilitySpec, text: string): ReplyInterpretation {
    if (text.length > MAX_REPLY_CHARS) return { kind: 'unrelated' };
    const normalized = text.replace(/\s+/g, ' ').trim();
    if (normalized === '') return { kind: 'unrelated' };
    const bare = normalized.replace(/[\s.!]+$/, '');

    const booleanAnswer = this.booleanAnswer(pending, capability, bare);
    if (booleanAnswer) return booleanAnswer;
    if (CANCEL.test(bare)) return { kind: 'cancel' };

    const affirm = AFFIRM.exec(normalized);
    if (affirm) {
      const rest = normalized.slice(affirm[0].length).replace(AFFIRM_FILLER, '');
      if (rest.replace(/[\s.!]+$/, '') === '') return { kind: 'confirm', values: {} };
      const values = this.parseValues(pending, capability, rest);
      return values ? { kind: 'confirm', values } : { kind: 'unrelated' };
    }

    const values = this.parseValues(pending, capability, normalized);
    return values ? { kind: 'values', values } : { kind: 'unrelated' };
  }

  private parseValues(pending: PendingCall, capability: CapabilitySpec, text: string): JsonObject | undefined {
    const keyed = parseKeyed(text, this.pattern(capability));
    if (keyed) return keyed;
    return parseUnkeyed(text, pending);
  }

  /** "yes"/"no" is the value itself when the one thing missing is a boolean and nothing awaits confirmation. */
  private booleanAnswer(pending: PendingCall, capability: CapabilitySpec, bare: string): ReplyInterpretation | undefined {
    if (pending.uncertain.length > 0 || pending.missing.length !== 1) return undefined;
    const [spec] = specsByName(capability, pending.missing);
    if (spec?.type !== 'boolean') return undefined;
    const word = bare.toLowerCase();
    if (['yes', 'y', 'yep', 'yeah', 'true', 'on'].includes(word)) return { kind: 'values', values: { [spec.name]: true } };
    if (['no', 'n', 'nope', 'false', 'off'].includes(word)) return { kind: 'values', values: { [spec.name]: false } };
    return undefined;
  }

  private pattern(capability: CapabilitySpec): KeyPattern {
    let pattern = this.patterns.get(capability);
    if (!pattern) {
      pattern = buildKeyPattern(capability);
      this.patterns.set(capability, pattern);
    }
    return pattern;
  }
}

export interface MergedReply {
  explicit: JsonObject;
  confirmed: string[];
}

/**
 * What a confirm/values reply changes in a pending call, ready for the next resolver run: new values
 * join the explicit ones (a correction replaces the uncertain value), and "yes" confirms every value
 * that was shown for confirmation. Cancel and unrelated replies change nothing.
 */
export function mergeReply(pending: PendingCall, reply: ReplyInterpretation): MergedReply {
  const explicit: JsonObject = { ...pending.explicit };
  const confirmed = new Set(pending.confirmed);
  if (reply.kind === 'confirm' || reply.kind === 'values') Object.assign(explicit, reply.values);
  if (reply.kind === 'confirm') for (const name of pending.uncertain) confirmed.add(name);
  return { explicit, confirmed: [...confirmed] };
}
