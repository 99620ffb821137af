// Reads a kubectl `List` (`{"apiVersion": ..., "items": [ {...}, ... ], ...}`) one item at a time, from
// bytes arriving in chunks. A 5,000-node dump is over a gigabyte: more than V8 can hold in one string
// (about 512 MiB), and its fully parsed objects several times that. Cut into items, each item is parsed
// on its own and can be projected (core/input/projection.ts) before the next one is read, so memory
// holds one raw item at a time plus what the planner keeps.
//
// The scanner only tracks what it needs to find item boundaries: nesting depth, strings and escapes.
// It does not validate JSON: every item is handed to JSON.parse, and the text around the items (the
// List's own fields) is parsed as one small object at the end. Anything it does not recognise (a
// top-level array, an `items` that holds something other than objects, a missing `items`) is reported
// as `NotAList`, so that the caller can fall back to decoding the whole text.
//
// `pushParsing` adds a fast path for what kubectl prints (scanning every byte of a 1 GB dump
// in JavaScript cost as much as parsing it). A JSON string never holds a raw newline, so in an indented
// List the line `<indent of the items>}` can only be a closing brace, and such a line ends an item if the
// text is indented consistently. From an item's start, the text up to the last such line within the next
// 64 KiB of the chunk is parsed at once, wrapped in brackets, and the parse itself confirms the cut:
// a prefix of the items parses as an array only if it ends where an item ends. When it does not parse
// (odd indentation, or an item that is not valid JSON), the items are scanned byte by byte as usual and
// the fast path stays off for the rest of the input, so a bad item gets the same error as without it.
// The item that spans into the next chunk is scanned byte by byte (about one in 250 of kubectl's pods).

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

/** Bytes that matter inside an item outside strings: the rest (whitespace, numbers, `:`, `,`, literals) is skipped. */
const STRUCTURAL = new Uint8Array(256);
for (const c of [QUOTE, OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET, CLOSE_BRACKET]) STRUCTURAL[c] = 1;

/** Position of the first `byte` at or after `from`, or the chunk's length when there is none. */
function indexOrEnd(chunk: Buffer, byte: number, from: number): number {
  const at = chunk.indexOf(byte, from);
  return at < 0 ? chunk.length : at;
}

/** The input is not shaped as `{ ..., "items": [ {...}, ... ] }`; decode it some other way. */
export class NotAList extends Error {
  override readonly name = 'NotAList';
}

type Mode = 'start' | 'shell' | 'items' | 'item' | 'done';

/** An item the fast path already parsed (`pushParsing`). */
export class ParsedItem {
  constructor(readonly value: unknown) {}
}

/**
 * Bytes of items the fast path parses with one JSON.parse: a few dozen pods. Much larger batches are
 * slower (their objects outlive the young generation), single items cost a search each (measured on
 * the 1,000-node benchmark dump: 0.70 s to split and parse at 64 KiB, 1.1 s byte by byte, 1.2 s with
 * whole 1 MiB chunks).
 */
const BATCH_BYTES = 64 * 1024;
const NEWLINE = 0x0a;
const SPACE = 0x20;
const TAB = 0x09;

export class ListItemSplitter {
  private mode: Mode = 'start';
  private depth = 0;
  private inString = false;
  /** A backslash ended the previous chunk inside a string. */
  private escaped = false;
  /** The List's own text, items left out (parsed when the input ends). */
  private readonly shell: Buffer[] = [];
  /** Pieces of the item being read (it may span chunks). */
  private itemPieces: Buffer[] = [];
  /** Text of the last string at depth 1, to recognise the `items` key. */
  private lastKey = '';
  private keyStart = -1;
  private keyPieces: Buffer[] = [];
  private sawBom = false;
  /**
   * The fast path's closing line (newline, the first item's indentation, `}`); undefined until the first
   * item shows its indentation, null when there is none (compact JSON) or the fast path was turned off.
   */
  private closing: Buffer | null | undefined;

  /**
   * Feeds a chunk; returns the items it completed, each as the bytes of one JSON object. They may share
   * the chunk's memory: use them before reusing the chunk.
   */
  push(chunk: Buffer): Buffer[] {
    return this.scan(chunk, false) as Buffer[];
  }

  /**
   * Like `push`, but the items of an indented List come back already parsed (see the fast path above);
   * the others come back as bytes, for the caller to parse and to report.
   */
  pushParsing(chunk: Buffer): (Buffer | ParsedItem)[] {
    return this.scan(chunk, true);
  }

  private scan(chunk: Buffer, parsing: boolean): (Buffer | ParsedItem)[] {
    const out: (Buffer | ParsedItem)[] = [];
    let i = 0;
    if (!this.sawBom) {
      this.sawBom = true;
      if (chunk.length >= 3 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) i = 3;
    }
    let segmentStart = i;
    let itemStart = this.mode === 'item' ? i : -1;
    const n = chunk.length;
    if (this.keyStart >= 0) this.keyStart = 0;
    // Positions of the next quote / backslash at or after the last search (n: none left in the chunk).
    let nextQuote = -1;
    let nextBackslash = -1;
    // Start of the current line within this chunk while between items (-1: not seen in this chunk).
    let lineStart = -1;
    while (i < n) {
      if (this.inString) {
        if (this.escaped) {
          this.escaped = false;
          i++;
          continue;
        }
        // Jump to the closing quote or the next backslash, whichever comes first. Strings are most of a
        // dump, so this is the hot path: Buffer.indexOf scans natively, and the next quote and backslash
        // are remembered, so a string full of escapes does not rescan up to a far quote each time.
        if (nextQuote < i) nextQuote = indexOrEnd(chunk, QUOTE, i);
        if (nextBackslash < i) nextBackslash = indexOrEnd(chunk, BACKSLASH, i);
        const backslashFirst = nextBackslash < nextQuote;
        i = backslashFirst ? nextBackslash : nextQuote;
        if (i >= n) continue;
        if (backslashFirst) {
          if (i + 1 < n) i += 2;
          else {
            this.escaped = true;
            i = n;
          }
          continue;
        }
        this.inString = false;
        if (this.depth === 1 && this.keyStart >= 0) {
          this.keyPieces.push(chunk.subarray(this.keyStart, i));
          this.lastKey = Buffer.concat(this.keyPieces).toString('utf8');
          this.keyPieces = [];
          this.keyStart = -1;
        }
        i++;
        continue;
      }
      // Inside an item only strings and brackets move the state: skip everything else in a tight loop
      // (a kubectl dump is indented, so runs of spaces are long).
      if (this.mode === 'item') {
        while (i < n && STRUCTURAL[chunk[i]!] === 0) i++;
        if (i >= n) break;
      }
      const c = chunk[i]!;
      if (c === QUOTE) {
        if (this.mode === 'items') throw new NotAList('items holds something other than objects');
        this.inString = true;
        if (this.depth === 1 && this.mode === 'shell') {
          this.keyStart = i + 1;
          this.keyPieces = [];
        }
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        if (this.mode === 'start') {
          if (c !== OPEN_BRACE) throw new NotAList('the text is not a JSON object');
          this.mode = 'shell';
        } else if (this.mode === 'shell' && this.depth === 1 && c === OPEN_BRACKET && this.lastKey === 'items') {
          // Keep `[` in the shell, leave the items out of it.
          this.shell.push(Buffer.from(chunk.subarray(segmentStart, i + 1)));
          this.mode = 'items';
        } else if (this.mode === 'items' && this.depth === 2) {
          if (c !== OPEN_BRACE) throw new NotAList('items holds something other than objects');
          if (parsing && this.closing === undefined) this.closing = closingLine(chunk, lineStart, i);
          if (parsing && this.closing) {
            // The items that end within the next BATCH_BYTES, parsed at once (else this item alone).
            let last = chunk.lastIndexOf(this.closing, Math.min(n, i + BATCH_BYTES));
            if (last <= i) last = chunk.indexOf(this.closing, i + 1);
            if (last > i) {
              const end = last + this.closing.length;
              const values = parseItems(chunk, i, end);
              if (values) {
                for (const value of values) out.push(new ParsedItem(value));
                i = end;
                continue;
              }
              this.closing = null; // not indented as expected: scan the rest byte by byte
            }
          }
          this.mode = 'item';
          itemStart = i;
        }
        this.depth++;
      } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        this.depth--;
        if (this.mode === 'item' && this.depth === 2) {
          this.itemPieces.push(chunk.subarray(itemStart, i + 1));
          out.push(this.itemPieces.length === 1 ? this.itemPieces[0]! : Buffer.concat(this.itemPieces));
          this.itemPieces = [];
          itemStart = -1;
          this.mode = 'items';
        } else if (this.mode === 'items' && this.depth === 1) {
          segmentStart = i;
          this.mode = 'shell';
          this.lastKey = '';
        } else if (this.depth === 0 && this.mode === 'shell') {
          this.shell.push(Buffer.from(chunk.subarray(segmentStart, i + 1)));
          segmentStart = i + 1;
          this.mode = 'done';
        } else if (this.depth < 0) {
          throw new NotAList('unbalanced brackets');
        }
      } else if (this.mode === 'items' && c !== COMMA && c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) {
        throw new NotAList('items holds something other than objects');
      } else if (this.mode === 'items' && c === NEWLINE) {
        lineStart = i + 1;
      } else if (this.mode === 'done' && c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) {
        throw new NotAList('text after the top-level object');
      } else if (this.mode === 'start' && c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) {
        throw new NotAList('the text is not a JSON object');
      }
      i++;
    }
    // What is kept across calls is copied: the caller may reuse the chunk's memory.
    if (this.mode === 'shell') this.shell.push(Buffer.from(chunk.subarray(segmentStart, n)));
    if (this.mode === 'item' && itemStart >= 0) this.itemPieces.push(Buffer.from(chunk.subarray(itemStart, n)));
    // A key split across chunks: keep its first part (the chunk's buffer may be reused by the caller).
    if (this.inString && this.keyStart >= 0) {
      this.keyPieces.push(Buffer.from(chunk.subarray(this.keyStart, n)));
      this.keyStart = 0;
    }
    return out;
  }

  /**
   * The List's own fields (`items` left empty), once the whole input has been fed. Throws NotAList when
   * the input ended early or held no `items` array.
   */
  end(): Record<string, unknown> {
    if (this.mode !== 'done' || this.inString) throw new NotAList('the text ends before the top-level object does');
    let shell: unknown;
    try {
      shell = JSON.parse(Buffer.concat(this.shell).toString('utf8'));
    } catch (error) {
      throw new NotAList(`the List's own fields are not valid JSON (${(error as Error).message})`);
    }
    if (typeof shell !== 'object' || shell === null || !Array.isArray((shell as Record<string, unknown>)['items'])) {
      throw new NotAList('no items array');
    }
    return shell as Record<string, unknown>;
  }
}

/**
 * The line that closes an item indented like the one opening at `open` (newline, the blanks before the
 * `{`, then `}`), or null when the item does not start its own line after nothing but blanks (undefined:
 * not known from this chunk).
 */
function closingLine(chunk: Buffer, lineStart: number, open: number): Buffer | null | undefined {
  if (lineStart < 0) return undefined; // the line began in an earlier chunk: see the next item
  for (let k = lineStart; k < open; k++) if (chunk[k] !== SPACE && chunk[k] !== TAB) return null;
  return Buffer.concat([Buffer.from([NEWLINE]), chunk.subarray(lineStart, open), Buffer.from([CLOSE_BRACE])]);
}

/**
 * The items in `chunk[start, end)` (from an item's `{` to a closing line's `}`), or undefined when that
 * text is not a run of whole items: wrapped in brackets it must parse as an array of objects, which it
 * does only when `end` is the end of an item (see the fast path above).
 */
function parseItems(chunk: Buffer, start: number, end: number): unknown[] | undefined {
  let values: unknown;
  try {
    values = JSON.parse(`[${chunk.toString('utf8', start, end)}]`) as unknown;
  } catch {
    return undefined;
  }
  if (!Array.isArray(values)) return undefined;
  for (const value of values) if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return values;
}

/** Splits a whole buffer (see ListItemSplitter); the List's own fields are checked at the end. */
export function* splitListItems(bytes: Buffer): Generator<Buffer> {
  const splitter = new ListItemSplitter();
  const step = 16 << 20;
  for (let offset = 0; offset < bytes.length; offset += step) {
    yield* splitter.push(bytes.subarray(offset, offset + step));
  }
  splitter.end();
}
