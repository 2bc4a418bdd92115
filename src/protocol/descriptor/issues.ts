// Descriptor normalisation reports every problem at once, each at the path of the offending value in
// the INPUT (so the author can find it in their own plugin.yaml or metadata), never just the first.
import { escapePointer } from '../validate.js';
import type { JsonObject, JsonValue, ValidationIssue } from '../types.js';
import { isPlainObject } from '../../kit/plain-object.js';

export class IssueList {
  readonly errors: ValidationIssue[] = [];
  readonly warnings: ValidationIssue[] = [];

  error(path: string, message: string): void {
    this.errors.push({ path, message });
  }

  warn(path: string, message: string): void {
    this.warnings.push({ path, message });
  }

  get hasErrors(): boolean {
    return this.errors.length > 0;
  }
}

export function at(path: string, key: string | number): string {
  return `${path}/${escapePointer(String(key))}`;
}

export function isJsonValue(value: unknown, depth = 0): value is JsonValue {
  if (depth > 64) return false;
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every((item) => isJsonValue(item, depth + 1));
  if (isPlainObject(value)) {
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) return false;
    return Object.values(value).every((item) => item === undefined || isJsonValue(item, depth + 1));
  }
  return false;
}

/** A JSON copy without undefined members, so canonical descriptors compare and hash cleanly. */
export function toJsonObject(value: Record<string, unknown>): JsonObject {
  return JSON.parse(JSON.stringify(value)) as JsonObject;
}

/** Reads typed optional fields from one object, recording an error for each wrong one. */
export class FieldReader {
  constructor(
    private readonly source: Record<string, unknown>,
    private readonly path: string,
    private readonly issues: IssueList,
  ) {}

  has(key: string): boolean {
    return this.source[key] !== undefined;
  }

  pathOf(key: string): string {
    return at(this.path, key);
  }

  requiredString(key: string, what = key): string | undefined {
    const value = this.source[key];
    if (value === undefined || value === null) {
      this.issues.error(this.pathOf(key), `${what} is required`);
      return undefined;
    }
    return this.checkString(key, value, true);
  }

  string(key: string, options: { nonEmpty?: boolean } = {}): string | undefined {
    const value = this.source[key];
    if (value === undefined || value === null) return undefined;
    return this.checkString(key, value, options.nonEmpty ?? false);
  }

  boolean(key: string): boolean | undefined {
    const value = this.source[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'boolean') {
      this.issues.error(this.pathOf(key), `must be true or false, not ${describe(value)}`);
      return undefined;
    }
    return value;
  }

  number(key: string, options: { integer?: boolean; min?: number; exclusiveMin?: number } = {}): number | undefined {
    const value = this.source[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      this.issues.error(this.pathOf(key), `must be a number, not ${describe(value)}`);
      return undefined;
    }
    if (options.integer && !Number.isInteger(value)) {
      this.issues.error(this.pathOf(key), 'must be an integer');
      return undefined;
    }
    if (options.min !== undefined && value < options.min) {
      this.issues.error(this.pathOf(key), `must be >= ${options.min}`);
      return undefined;
    }
    if (options.exclusiveMin !== undefined && value <= options.exclusiveMin) {
      this.issues.error(this.pathOf(key), `must be > ${options.exclusiveMin}`);
      return undefined;
    }
    return value;
  }

  stringArray(key: string): string[] | undefined {
    const value = this.source[key];
    if (value === undefined || value === null) return undefined;
    if (!Array.isArray(value)) {
      this.issues.error(this.pathOf(key), `must be a list of strings, not ${describe(value)}`);
      return undefined;
    }
    let ok = true;
    value.forEach((item, index) => {
      if (typeof item !== 'string') {
        this.issues.error(at(this.pathOf(key), index), `must be a string, not ${describe(item)}`);
        ok = false;
      }
    });
    return ok ? (value as string[]) : undefined;
  }

  object(key: string): JsonObject | undefined {
    const value = this.source[key];
    if (value === undefined || value === null) return undefined;
    if (!isPlainObject(value) || !isJsonValue(value)) {
      this.issues.error(this.pathOf(key), `must be a JSON object, not ${describe(value)}`);
      return undefined;
    }
    return toJsonObject(value);
  }

  /** Reports keys nobody reads, as warnings: a typo such as "capabilites" must not vanish silently. */
  warnUnknown(known: ReadonlySet<string>): void {
    for (const key of Object.keys(this.source)) {
      if (!known.has(key) && this.source[key] !== undefined) this.issues.warn(this.pathOf(key), 'unknown field ignored');
    }
  }

  private checkString(key: string, value: unknown, nonEmpty: boolean): string | undefined {
    if (typeof value !== 'string') {
      this.issues.error(this.pathOf(key), `must be a string, not ${describe(value)}`);
      return undefined;
    }
    if (nonEmpty && value.trim() === '') {
      this.issues.error(this.pathOf(key), 'must not be empty');
      return undefined;
    }
    return value;
  }
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  return `${typeof value} ${String(value)}`;
}
