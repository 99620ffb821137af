// Typed reads from decoded JSON/YAML with errors that name the object and the field path.
//
// Every parser in this folder reads untrusted documents. Rather than sprinkling `typeof` checks, each
// parser builds a `Fields` reader for the object it is working on (e.g. `Pod default/web-0`) and
// asks it for values by path; a wrong type becomes an InputError carrying both names, which the file
// adapters then attribute to a file (docs/file-formats.md, "Bad input": exit 2 naming the file, the
// object and the field).
import { InputError } from '../errors.ts';
import { parseTimestamp } from './time.ts';

export type JsonRecord = Record<string, unknown>;

export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Joins a parent path and a child key: `spec` + `taints` -> `spec.taints`. */
export function joinPath(parent: string, child: string): string {
  if (parent === '') return child;
  if (child === '') return parent;
  return child.startsWith('[') ? `${parent}${child}` : `${parent}.${child}`;
}

/** Values longer than this are cut in error messages: a message must stay readable on one screen. */
const SHOW_MAX_CHARS = 120;

/**
 * How a number too large for a double reads in messages. JSON.parse turns `1e400` into Infinity, which
 * JSON.stringify would print as `null`: a message saying "got null" about a number misleads.
 */
const TOO_LARGE = 'a number too large to represent';
const TOO_LARGE_MARK = '\u0000too-large\u0000';

/** Shows a value in an error message the way a user wrote it, cut when long. */
export function show(value: unknown): string {
  let text: string;
  if (value === undefined) return 'nothing';
  if (typeof value === 'number' && !Number.isFinite(value)) return TOO_LARGE;
  try {
    text = JSON.stringify(value, (_key, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? TOO_LARGE_MARK : v)) ?? String(value);
  } catch {
    text = String(value);
  }
  return cut(text.replaceAll(JSON.stringify(TOO_LARGE_MARK), `(${TOO_LARGE})`));
}

/** `text` cut to a readable length, saying how much was left out. */
export function cut(text: string, max = SHOW_MAX_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max)}... (${text.length - max} more characters)`;
}

/**
 * Runs `read` and gives any InputError it throws the object and field it lacks. Low-level parsers
 * (quantities, durations) know only the text they were handed; the caller knows where it came from.
 */
export function at<T>(object: string, field: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof InputError) {
      throw new InputError(
        error.object === '' ? object : error.object,
        error.object === '' ? joinPath(field, error.field) : error.field,
        error.problem,
        error.file,
      );
    }
    throw error;
  }
}

/** A reader bound to one object; every method takes the value and its path inside the object. */
export class Fields {
  constructor(readonly object: string) {}

  fail(field: string, problem: string): never {
    throw new InputError(this.object, field, problem);
  }

  record(value: unknown, field: string): JsonRecord {
    if (!isRecord(value)) this.fail(field, value === undefined ? 'is required' : `must be an object, got ${show(value)}`);
    return value;
  }

  optRecord(value: unknown, field: string): JsonRecord | undefined {
    return value === undefined || value === null ? undefined : this.record(value, field);
  }

  array(value: unknown, field: string): unknown[] {
    if (!Array.isArray(value)) this.fail(field, value === undefined ? 'is required' : `must be a list, got ${show(value)}`);
    return value;
  }

  /** A list that may be absent (or null, as kubectl prints some empty lists). */
  optArray(value: unknown, field: string): unknown[] {
    return value === undefined || value === null ? [] : this.array(value, field);
  }

  string(value: unknown, field: string): string {
    if (typeof value !== 'string' || value === '') {
      this.fail(field, value === undefined || value === '' ? 'is required' : `must be a string, got ${show(value)}`);
    }
    return value;
  }

  optString(value: unknown, field: string): string | undefined {
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string') this.fail(field, `must be a string, got ${show(value)}`);
    return value;
  }

  optBoolean(value: unknown, field: string): boolean | undefined {
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'boolean') this.fail(field, `must be true or false, got ${show(value)}`);
    return value;
  }

  optInteger(value: unknown, field: string): number | undefined {
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) this.fail(field, `must be an integer, got ${show(value)}`);
    return value;
  }

  /** An RFC 3339 timestamp as epoch milliseconds, with an offset and in a sane range (time.ts). */
  optTimestamp(value: unknown, field: string): number | undefined {
    const text = this.optString(value, field);
    if (text === undefined) return undefined;
    const ms = parseTimestamp(text);
    if (typeof ms === 'string') this.fail(field, `${show(text)} ${ms}`);
    return ms;
  }

  /** A map of strings (labels, annotations, nodeSelector). */
  stringMap(value: unknown, field: string): Record<string, string> {
    if (value === undefined || value === null) return {};
    const record = this.record(value, field);
    const out: Record<string, string> = {};
    for (const [key, entry] of Object.entries(record)) {
      if (typeof entry !== 'string') this.fail(joinPath(field, key), `must be a string, got ${show(entry)}`);
      out[key] = entry;
    }
    return out;
  }

  /** `values` of a requirement: strings; YAML numbers and booleans are taken as their text. */
  stringList(value: unknown, field: string): string[] {
    return this.optArray(value, field).map((entry, i) => {
      if (typeof entry === 'string') return entry;
      if (typeof entry === 'number' || typeof entry === 'boolean') return String(entry);
      return this.fail(`${field}[${i}]`, `must be a string, got ${show(entry)}`);
    });
  }

  oneOf<T extends string>(value: unknown, field: string, allowed: readonly T[]): T {
    if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
      this.fail(field, `${value === undefined ? 'is required and' : show(value)} must be one of ${allowed.join(', ')}`);
    }
    return value as T;
  }

  /** Runs a parser that throws object-less InputErrors (quantities, durations) at `field`. */
  at<T>(field: string, read: () => T): T {
    return at(this.object, field, read);
  }
}
