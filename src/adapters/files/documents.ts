// Reading input files: JSON (one object, often a `List`) or a multi-document YAML stream. Every failure
// (missing file, bad syntax, bad content) becomes an InputError carrying the path as the user gave it,
// so the CLI prints e.g. `nodepools.yaml: NodePool "default": spec.disruption.budgets[0]: ...` and
// exits 2 (docs/file-formats.md, "Bad input").
import { parseAllDocuments, visit } from 'yaml';
import { InputError } from '../../core/errors.ts';
import { readBoundedText, type InputLimit } from './boundedText.ts';

/**
 * Reads a file as text, at most `limit.capBytes` of it, checked as UTF-8 (boundedText.ts); a missing
 * or unreadable file is bad input, not an internal error.
 */
export async function readText(path: string, limit: InputLimit): Promise<string> {
  try {
    return await readBoundedText(path, limit);
  } catch (error) {
    if (error instanceof InputError) throw error.inFile(path);
    const code = (error as NodeJS.ErrnoException).code;
    const problem =
      code === 'ENOENT' ? 'file not found'
      : code === 'EISDIR' ? 'is a directory, not a file'
      : code === 'EACCES' ? 'permission denied'
      : `cannot be read (${(error as Error).message})`;
    throw new InputError('', '', problem).inFile(path);
  }
}

/**
 * JSON.parse says `at position 35724`; a person wants the line (two concatenated `kubectl -o json`
 * outputs fail at the start of the second one, say). `skipped` is what was trimmed off the front.
 */
function withLine(message: string, text: string, skipped: number): string {
  const match = /position (\d+)/.exec(message);
  if (!match) return message;
  const offset = Number(match[1]) + skipped;
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return `${message} (line ${line}, column ${column})`;
}

function syntaxError(detail: string): InputError {
  return new InputError('', '', `not valid JSON or YAML: ${detail}`);
}

/**
 * Bounds on what a document may make the reader build. Kubernetes objects nest about 20 levels at most
 * (managedFields included) and `kubectl` output uses no YAML aliases, so these stop only crafted or
 * broken input: a few hundred bytes of nested aliases can expand into gigabytes (the "billion laughs").
 */
export const MAX_ALIASES_PER_FILE = 100;
/** The YAML library's own expansion guard: how many nodes the aliases may add, weighed by their size. */
const MAX_ALIAS_EXPANSION = 100;
export const MAX_NESTING_DEPTH = 100;

/** Decodes a YAML stream; returns the first syntax error's text instead when there is one. */
function decodeYaml(text: string): unknown[] | string {
  const out: unknown[] = [];
  let aliases = 0;
  for (const document of parseAllDocuments(text)) {
    const [error] = document.errors;
    if (error && /call stack/i.test(error.message)) throw tooDeep();
    if (error) return error.message.split('\n')[0] ?? error.message;
    visit(document, { Alias: () => void aliases++ });
    if (aliases > MAX_ALIASES_PER_FILE) throw new InputError('', '', `uses more than ${MAX_ALIASES_PER_FILE} YAML aliases (*name); write the values out instead`);
    let value: unknown;
    try {
      value = document.toJS({ maxAliasCount: MAX_ALIAS_EXPANSION });
    } catch (error) {
      // The library refuses an alias that expands too much (ReferenceError), or recursion runs out.
      if (error instanceof ReferenceError) throw new InputError('', '', 'YAML aliases expand into too much data; write the values out instead');
      if (error instanceof RangeError) throw tooDeep();
      throw error;
    }
    if (value !== null && value !== undefined) out.push(value);
  }
  return out;
}

function tooDeep(): InputError {
  return new InputError('', '', `nested more than ${MAX_NESTING_DEPTH} levels deep; no Kubernetes object is`);
}

/** Fails when any value nests deeper than MAX_NESTING_DEPTH (iteratively: deep input must not blow the stack). */
function checkDepth(documents: readonly unknown[]): void {
  // Two stacks side by side, and the children visited in place: this walks every object of every
  // input (some 15,000 in the bundled catalog alone) on each run, so it allocates nothing per object.
  const values: object[] = [];
  const depths: number[] = [];
  const push = (child: unknown, depth: number): void => {
    if (typeof child !== 'object' || child === null) return;
    if (depth > MAX_NESTING_DEPTH) throw tooDeep();
    values.push(child);
    depths.push(depth);
  };
  for (const document of documents) push(document, 1);
  while (values.length > 0) {
    const value = values.pop()!;
    const depth = depths.pop()! + 1;
    if (Array.isArray(value)) {
      for (const child of value) push(child, depth);
    } else {
      // for-in reads the object's own keys without making an array of them (hasOwn: as Object.keys would).
      for (const key in value) if (Object.hasOwn(value, key)) push((value as Record<string, unknown>)[key], depth);
    }
  }
}

/**
 * Decodes text into documents. Text that starts like JSON (`{` or `[`) is read as JSON first; if that
 * fails it may still be a YAML stream of JSON-style documents, and only when that fails too is the
 * JSON error (the clearer one for a JSON file) reported. Anything else is read as a YAML stream, empty
 * documents dropped. A top-level JSON array is taken as a list of documents. Throws object-less
 * InputErrors.
 */
export function decodeDocuments(text: string): unknown[] {
  const documents = decodeUnchecked(text);
  checkDepth(documents);
  return documents;
}

function decodeUnchecked(text: string): unknown[] {
  const trimmed = text.replace(/^\uFEFF/, '').trimStart();
  if (trimmed === '') throw new InputError('', '', 'the file is empty');
  let documents: unknown[] | string;
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      const value: unknown = JSON.parse(trimmed);
      return Array.isArray(value) ? value : [value];
    } catch (error) {
      if (error instanceof RangeError) throw tooDeep();
      documents = decodeYaml(trimmed);
      if (typeof documents === 'string') throw syntaxError(withLine((error as Error).message, text, text.length - trimmed.length));
    }
  } else {
    documents = decodeYaml(trimmed);
    if (typeof documents === 'string') throw syntaxError(documents);
  }
  if (documents.length === 0) throw new InputError('', '', 'the file holds no documents');
  return documents;
}

/** Runs a parser over a file's documents, attributing every InputError to the file. */
export async function parseFile<T>(path: string, limit: InputLimit, parse: (documents: unknown[]) => T): Promise<T> {
  const text = await readText(path, limit);
  try {
    return parse(decodeDocuments(text));
  } catch (error) {
    if (error instanceof InputError) throw error.inFile(path);
    throw error;
  }
}
