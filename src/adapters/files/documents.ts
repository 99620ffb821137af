// Reading input files: JSON (one object, often a `List`) or a multi-document YAML stream. Every failure
// (missing file, bad syntax, bad content) becomes an InputError carrying the path as the user gave it,
// so the CLI prints e.g. `nodepools.yaml: NodePool "default": spec.disruption.budgets[0]: ...` and
// exits 2 (CONTRACT §1).
import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import { InputError } from '../../core/errors.ts';

/** Reads a file as text; a missing or unreadable file is bad input, not an internal error. */
export async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const problem =
      code === 'ENOENT' ? 'file not found'
      : code === 'EISDIR' ? 'is a directory, not a file'
      : code === 'EACCES' ? 'permission denied'
      : `cannot be read (${(error as Error).message})`;
    throw new InputError('', '', problem).inFile(path);
  }
}

function syntaxError(detail: string): InputError {
  return new InputError('', '', `not valid JSON or YAML: ${detail}`);
}

/** Decodes a YAML stream; returns the first syntax error's text instead when there is one. */
function decodeYaml(text: string): unknown[] | string {
  const out: unknown[] = [];
  for (const document of parseAllDocuments(text)) {
    const [error] = document.errors;
    if (error) return error.message.split('\n')[0] ?? error.message;
    const value: unknown = document.toJS({ maxAliasCount: 1000 });
    if (value !== null && value !== undefined) out.push(value);
  }
  return out;
}

/**
 * Decodes text into documents. Text that starts like JSON (`{` or `[`) is read as JSON first; if that
 * fails it may still be a YAML stream of JSON-style documents, and only when that fails too is the
 * JSON error (the clearer one for a JSON file) reported. Anything else is read as a YAML stream, empty
 * documents dropped. A top-level JSON array is taken as a list of documents. Throws object-less
 * InputErrors.
 */
export function decodeDocuments(text: string): unknown[] {
  const trimmed = text.replace(/^\uFEFF/, '').trimStart();
  if (trimmed === '') throw new InputError('', '', 'the file is empty');
  let documents: unknown[] | string;
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      const value: unknown = JSON.parse(trimmed);
      return Array.isArray(value) ? value : [value];
    } catch (error) {
      documents = decodeYaml(trimmed);
      if (typeof documents === 'string') throw syntaxError((error as Error).message);
    }
  } else {
    documents = decodeYaml(trimmed);
    if (typeof documents === 'string') throw syntaxError(documents);
  }
  if (documents.length === 0) throw new InputError('', '', 'the file holds no documents');
  return documents;
}

/** Runs a parser over a file's documents, attributing every InputError to the file. */
export async function parseFile<T>(path: string, parse: (documents: unknown[]) => T): Promise<T> {
  const text = await readText(path);
  try {
    return parse(decodeDocuments(text));
  } catch (error) {
    if (error instanceof InputError) throw error.inFile(path);
    throw error;
  }
}
