// What Powertools' logger and metrics print, kept for assertions. They write one JSON document per
// line through a Console of their own: info, debug and EMF to stdout, warn and error to stderr (Lambda
// sends both to CloudWatch Logs).
import { vi, type MockInstance } from 'vitest';

/** Captures in progress, innermost last: each line goes to the innermost one. */
const captures: string[][] = [];
let spies: MockInstance[] = [];

const keep = ((chunk: string | Uint8Array) => {
  const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
  const lines = captures.at(-1);
  for (const line of text.split('\n')) if (line.trim() !== '') lines?.push(line);
  return true;
}) as typeof process.stdout.write;

/**
 * Keeps what is written to stdout and stderr in `lines` instead of printing it, until the returned
 * function is called. Captures nest: an inner one takes the lines while it lasts.
 */
export function captureStdout(lines: string[]): () => void {
  if (captures.length === 0) spies = [vi.spyOn(process.stdout, 'write').mockImplementation(keep), vi.spyOn(process.stderr, 'write').mockImplementation(keep)];
  captures.push(lines);
  return () => {
    const at = captures.lastIndexOf(lines);
    if (at >= 0) captures.splice(at, 1);
    if (captures.length === 0) for (const spy of spies.splice(0)) spy.mockRestore();
  };
}
