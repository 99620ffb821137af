// Reading an input file's bytes as UTF-8 text, with a cap on how many bytes are read and a check that
// the bytes are UTF-8.
//
// - The cap: without one, a path such as /dev/urandom (or a FIFO nobody closes) is read until memory
//   runs out. Each kind of input has its own (INPUT_LIMITS), generous for real use; reading stops as
//   soon as the cap is passed, whatever the file is (a regular file larger than its cap is refused
//   before a byte is read).
// - The encoding: Node's decoder replaces bytes that are not UTF-8 with U+FFFD, so a label would
//   silently change. Such bytes are refused with their offset. A UTF-16 file (what some Windows editors
//   and PowerShell's `>` write) is recognised by its byte order mark and named as such, rather than
//   reported as a syntax error full of NUL characters.
//
// Problems are object-less InputErrors; the callers attribute them to the file (`inFile`).
import { isUtf8 } from 'node:buffer';
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { InputError } from '../../core/errors.ts';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

export interface InputLimit {
  /** The most bytes read. */
  readonly capBytes: number;
  /** The kind of file, for messages: `a catalog file`. */
  readonly what: string;
}

/**
 * The caps. A kubectl JSON List of a cluster is read in parts (clusterFile.ts), so only memory for the
 * model bounds it: 5,000 nodes with 150,000 pods print as about 1.2 GB, and the cap leaves three times
 * that. Anything decoded whole (YAML, or a dump from a pipe) becomes one string, which V8 caps at
 * about 512 MiB. Catalogs, NodePools and state files are megabytes at most (the bundled catalog of
 * 1,345 instance types is 2 MB; a state file holds a few hundred bytes per node).
 */
export const INPUT_LIMITS = {
  clusterList: { capBytes: 4 * GiB, what: 'a cluster file' },
  clusterWhole: { capBytes: 400 * MiB, what: 'a cluster that is not a kubectl JSON List in a file (YAML, or read from a pipe)' },
  catalog: { capBytes: 64 * MiB, what: 'a catalog file' },
  nodePools: { capBytes: 64 * MiB, what: 'a NodePool file' },
  state: { capBytes: 64 * MiB, what: 'a state file' },
} as const satisfies Record<string, InputLimit>;

/** `4 GiB`, `64 MiB`: caps are whole MiB or GiB. */
export function formatBytes(bytes: number): string {
  if (bytes >= GiB && bytes % GiB === 0) return `${bytes / GiB} GiB`;
  if (bytes >= MiB) return `${Math.round((bytes / MiB) * 10) / 10} MiB`;
  return `${bytes} bytes`;
}

export function tooLarge(limit: InputLimit, sizeBytes?: number): InputError {
  const size = sizeBytes === undefined ? 'is larger than' : `is ${formatBytes(sizeBytes)}, larger than`;
  const stopped = sizeBytes === undefined ? ' (reading stopped there)' : '';
  return new InputError('', '', `${size} ${formatBytes(limit.capBytes)}, the most ${limit.what} may hold${stopped}`);
}

/** The encoding a byte order mark at the start of `head` names, when it is not UTF-8. */
function foreignEncoding(head: Buffer): string | undefined {
  if (head.length >= 4 && head[0] === 0xff && head[1] === 0xfe && head[2] === 0 && head[3] === 0) return 'UTF-32';
  if (head.length >= 4 && head[0] === 0 && head[1] === 0 && head[2] === 0xfe && head[3] === 0xff) return 'UTF-32';
  if (head.length >= 2 && ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff))) return 'UTF-16';
  // No mark, but ASCII text in UTF-16 has every other byte zero: `{\0"\0` or `\0{\0"`.
  if (head.length >= 4 && head[0] !== 0 && head[1] === 0 && head[2] !== 0 && head[3] === 0) return 'UTF-16';
  if (head.length >= 4 && head[0] === 0 && head[1] !== 0 && head[2] === 0 && head[3] !== 0) return 'UTF-16';
  return undefined;
}

/** Length of the character a lead byte starts (1 for ASCII), or 0 for a byte that starts none. */
function sequenceLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

/**
 * Offset of the first byte that does not start a valid UTF-8 character (a stray continuation byte, an
 * overlong form, a surrogate, a value above U+10FFFF, or a character cut off by the end), or -1.
 * Only run once isUtf8 has said there is one: isUtf8 is native and fast, this is neither.
 */
export function firstInvalidUtf8(bytes: Buffer): number {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i]!;
    const length = sequenceLength(lead);
    if (length === 0 || i + length > bytes.length) return i;
    if (length > 1) {
      // The second byte's range depends on the lead (this is what excludes overlongs and surrogates).
      const low = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80;
      const high = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf;
      const second = bytes[i + 1]!;
      if (second < low || second > high) return i;
      for (let k = 2; k < length; k++) {
        const next = bytes[i + k]!;
        if (next < 0x80 || next > 0xbf) return i;
      }
    }
    i += length;
  }
  return -1;
}

function notUtf8(offset: number, byte: number | undefined): InputError {
  const what = byte === undefined ? 'the text ends inside a character' : `byte 0x${byte.toString(16).toUpperCase().padStart(2, '0')} does not begin a valid character`;
  return new InputError('', '', `is not valid UTF-8: at byte offset ${offset}, ${what}; save the file as UTF-8`);
}

/**
 * Checks bytes arriving in pieces as UTF-8; a character may span two pieces. Throws at the first
 * invalid byte, so a stream of random bytes is refused within its first piece.
 */
export class Utf8Check {
  /** Bytes fed so far. */
  private fed = 0;
  /** A character cut by the end of the last piece (copied: the caller may reuse its buffer). */
  private pending: Buffer = Buffer.alloc(0);
  private headChecked = false;

  push(piece: Buffer): void {
    if (!this.headChecked) {
      this.headChecked = true;
      const encoding = foreignEncoding(piece.subarray(0, 4));
      if (encoding !== undefined) throw new InputError('', '', `the file is ${encoding}; save it as UTF-8 (it starts the way ${encoding} text does)`);
    }
    const pieceStart = this.fed;
    this.fed += piece.length;
    let from = 0;
    if (this.pending.length > 0) {
      const missing = sequenceLength(this.pending[0]!) - this.pending.length;
      const joined = Buffer.concat([this.pending, piece.subarray(0, Math.min(missing, piece.length))]);
      const start = pieceStart - this.pending.length;
      if (piece.length < missing) {
        // Still not whole: what came must at least continue it.
        if (piece.some((byte) => byte < 0x80 || byte > 0xbf)) throw notUtf8(start, joined[0]);
        this.pending = joined;
        return;
      }
      if (!isUtf8(joined)) {
        const at = firstInvalidUtf8(joined);
        throw notUtf8(start + at, joined[at]);
      }
      this.pending = Buffer.alloc(0);
      from = missing;
    }
    const end = wholeCharactersEnd(piece, from);
    const body = piece.subarray(from, end);
    if (!isUtf8(body)) {
      const at = firstInvalidUtf8(body);
      throw notUtf8(pieceStart + from + at, body[at]);
    }
    this.pending = Buffer.from(piece.subarray(end));
  }

  /** The input is over: a character still cut off is an error. */
  end(): void {
    if (this.pending.length > 0) throw notUtf8(this.fed - this.pending.length, undefined);
  }
}

/** Where the last character that ends within `bytes` ends (from `from` on). */
function wholeCharactersEnd(bytes: Buffer, from: number): number {
  // Back over at most three continuation bytes to the lead byte of the last character.
  let i = bytes.length - 1;
  while (i >= from && i > bytes.length - 4 && bytes[i]! >= 0x80 && bytes[i]! <= 0xbf) i--;
  if (i < from) return bytes.length; // nothing but continuation bytes: isUtf8 reports them
  const length = sequenceLength(bytes[i]!);
  return length > 1 && i + length > bytes.length ? i : bytes.length;
}

/** Bytes read into one growing buffer, within a cap, checked as UTF-8 as they come. */
export class BoundedText {
  private buffer: Buffer;
  private length = 0;
  private readonly utf8 = new Utf8Check();

  /** `expectedBytes`: a regular file's size, so that it is read into one buffer of the right size. */
  constructor(
    private readonly limit: InputLimit,
    expectedBytes = 0,
  ) {
    if (expectedBytes > limit.capBytes) throw tooLarge(limit, expectedBytes);
    // One byte more than expected, to see the end without growing (or the cap passed).
    this.buffer = Buffer.allocUnsafe(Math.min(limit.capBytes + 1, Math.max(expectedBytes + 1, 64 * 1024)));
  }

  /** Where to read the next bytes into (the buffer grows when full, up to one byte past the cap). */
  space(): Buffer {
    if (this.length === this.buffer.length) {
      const grown = Buffer.allocUnsafe(Math.min(this.limit.capBytes + 1, this.buffer.length * 2));
      this.buffer.copy(grown, 0, 0, this.length);
      this.buffer = grown;
    }
    return this.buffer.subarray(this.length);
  }

  /** Takes `count` bytes just read into `space()`. */
  commit(count: number): void {
    const piece = this.buffer.subarray(this.length, this.length + count);
    this.length += count;
    if (this.length > this.limit.capBytes) throw tooLarge(this.limit);
    this.utf8.push(piece);
  }

  /** Appends bytes from a stream. */
  push(chunk: Buffer): void {
    for (let offset = 0; offset < chunk.length; ) {
      const count = chunk.copy(this.space(), 0, offset);
      offset += count;
      this.commit(count);
    }
  }

  text(): string {
    this.utf8.end();
    return this.buffer.toString('utf8', 0, this.length);
  }
}

/**
 * A file's text, read within `limit` and checked as UTF-8. Errors opening or reading the file are
 * thrown as they come (callers word them: a missing state file is no error); bad size or encoding is
 * an object-less InputError.
 */
export async function readBoundedText(path: string, limit: InputLimit): Promise<string> {
  const handle: FileHandle = await open(path, 'r');
  try {
    const info = await handle.stat();
    const text = new BoundedText(limit, info.isFile() ? info.size : 0);
    for (;;) {
      const space = text.space();
      const { bytesRead } = await handle.read(space, 0, space.length, null);
      if (bytesRead === 0) break;
      text.commit(bytesRead);
    }
    return text.text();
  } finally {
    await handle.close();
  }
}

/** A stream's text (standard input), within `limit` and checked as UTF-8. */
export async function readBoundedStream(stream: AsyncIterable<Buffer | string>, limit: InputLimit): Promise<string> {
  const text = new BoundedText(limit);
  for await (const chunk of stream) text.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return text.text();
}
