// Text layout for the table (`--format table`): colour, cutting, wrapping, and kubectl-style columns that
// fit a given width. A grid that is too wide first cuts its shrinkable cells ("…", or a list cut with a
// count), then takes its fallbacks in order: a column shown narrower (a share instead of a pair), then
// columns left out. Each table names its own fallbacks, least useful first, and says which it took.

// ---------------------------------------------------------------------------------------------------
// Colour

const ANSI = { bold: '1', dim: '2', red: '31', green: '32', yellow: '33', cyan: '36' } as const;
export type Style = keyof typeof ANSI;
export type Paint = (style: Style, text: string) => string;

export function painter(enabled: boolean): Paint {
  return (style: Style, text: string) => (enabled && text !== '' ? `\u001b[${ANSI[style]}m${text}\u001b[0m` : text);
}

/** Columns a line takes on a terminal: colour codes take none. */
export const visibleLength = (line: string): number => line.replace(/\u001b\[[0-9;]*m/g, '').length;

// ---------------------------------------------------------------------------------------------------
// Cutting and wrapping

/** Cuts text to `max` columns with an ellipsis. */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  return max <= 1 ? text.slice(0, max) : `${text.slice(0, max - 1)}…`;
}

/** Words of `text` in lines of at most `width` columns, each after `indent` (a first line may be shorter). */
export function wrap(text: string, width: number, indent: string, firstIndent = indent): string[] {
  const lines: string[] = [];
  let line = firstIndent;
  let lineStart = true;
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    const candidate = lineStart ? `${line}${word}` : `${line} ${word}`;
    if (!lineStart && visibleLength(candidate) > width) {
      lines.push(line);
      line = `${indent}${word}`;
    } else {
      line = candidate;
    }
    lineStart = false;
  }
  if (!lineStart) lines.push(line);
  // A single word longer than the line is cut, unless it is painted (a cut would break its colour code).
  return lines.map((l) => (l.length > width && visibleLength(l) === l.length ? cut(l, width) : l));
}

/**
 * A line wider than `width` wrapped at its words, the rest under its own indent and 4 more. The last
 * guard of the table: every section lays itself out, this catches a line that did not.
 */
export function fitLine(line: string, width: number): string[] {
  if (visibleLength(line) <= width) return [line];
  const indent = /^ */.exec(line)![0];
  const next = `${indent}    `.slice(0, Math.max(0, Math.floor(width / 3)));
  // Words keep the spaces before them (a row's padding survives); a break drops them.
  const lines: string[] = [];
  let current = '';
  for (const token of line.slice(indent.length).match(/\s*\S+/g) ?? []) {
    if (current === '') current = `${indent}${token.trimStart()}`;
    else if (visibleLength(current + token) <= width) current += token;
    else {
      lines.push(current);
      current = `${next}${token.trimStart()}`;
    }
  }
  if (current !== '') lines.push(current);
  return lines.map((l) => (l.length > width && visibleLength(l) === l.length ? cut(l, width) : l));
}

/** As many items as fit in `max` columns, then `+N more`. */
export function listWithCount(items: readonly string[], max: number): string {
  const all = items.join(', ');
  if (all.length <= max) return all;
  for (let n = items.length - 1; n >= 1; n--) {
    const text = `${items.slice(0, n).join(', ')} +${items.length - n} more`;
    if (text.length <= max) return text;
  }
  const more = ` +${items.length - 1} more`;
  return `${cut(items[0] ?? '', Math.max(1, max - more.length))}${more}`;
}

// ---------------------------------------------------------------------------------------------------
// Columns

export interface Column {
  readonly header: string;
  /** May be cut with "…" when the row is too wide. */
  readonly shrinkable?: boolean;
  /** Never cut below this. */
  readonly minWidth?: number;
  /**
   * Cut only down to this before the grid's fallbacks are taken (below it, only once they are all
   * taken). Absent: a column whose cells lay out a list (`Cell.fit`) goes down to `minWidth` first,
   * any other is cut only after the fallbacks.
   */
  readonly softMinWidth?: number;
  readonly align?: 'right';
}

export interface Cell {
  readonly text: string;
  readonly style?: Style;
  /** The cell in its column's narrow form (a `narrow` fallback), e.g. `30%` for `575m/1930m 30%`. */
  readonly narrow?: string;
  /** The cell laid out in `max` columns (instead of cut with "…"), e.g. a list cut with a count. */
  readonly fit?: (max: number) => string;
}

/** What a too-wide grid gives up, in order: a column shown narrow, or left out. */
export type Fallback = { readonly narrow: readonly string[]; readonly as: string } | { readonly drop: string };

export interface GridOptions {
  /** One space (not two) before right-aligned numeric columns: their own padding separates them. */
  readonly tight?: boolean;
  /** Taken in order while the grid is wider than `width` with every shrinkable column at its minimum. */
  readonly fallbacks?: readonly Fallback[];
}

export interface Grid {
  /** The header line, then one line per row. */
  readonly lines: string[];
  /** Headers of the columns left out (empty when everything fitted). */
  readonly dropped: string[];
  /** The narrow forms taken, e.g. `CPU and MEMORY as shares only`. */
  readonly narrowed: string[];
}

/**
 * Spaces before column `i`: two; in a tight grid one before a right-aligned (numeric) column, whose
 * own padding mostly separates it (the node table needs those columns to fit in 120).
 */
export const gapBefore = (columns: readonly Column[], i: number, tight = false) => (i === 0 ? 0 : tight && columns[i]!.align === 'right' ? 1 : 2);

/**
 * Rows under kubectl-style headers, in `width` columns when the fallbacks allow. In order: shrinkable
 * columns are cut (widest first) down to their soft minimum; while that is not enough the next fallback
 * is taken; with none left, they are cut down to their minimum. A row's cell `i` belongs to column `i`.
 */
export function grid(columns: readonly Column[], rows: readonly (readonly Cell[])[], width: number, paint: Paint, options: GridOptions = {}): Grid {
  const dropped = new Set<string>();
  const narrowed = new Set<string>();
  const said: string[] = [];
  const fallbacks = [...(options.fallbacks ?? [])].filter((f) => ('drop' in f ? columns.some((c) => c.header === f.drop) : f.narrow.some((h) => columns.some((c) => c.header === h))));
  for (;;) {
    const kept = columns.map((c, i) => ({ c, i })).filter(({ c }) => !dropped.has(c.header));
    const keptColumns = kept.map(({ c }) => c);
    const keptRows = rows.map((r) => kept.map(({ c, i }) => (narrowed.has(c.header) && r[i]?.narrow !== undefined ? { ...r[i]!, text: r[i]!.narrow! } : (r[i] ?? { text: '' }))));
    const tight = options.tight === true;
    const lists = keptColumns.map((_, i) => keptRows.some((r) => r[i]?.fit !== undefined));
    const hard = (c: Column) => Math.max(c.minWidth ?? 8, c.header.length);
    const soft = (c: Column, i: number) => (c.softMinWidth !== undefined ? Math.max(c.softMinWidth, hard(c)) : lists[i] ? hard(c) : Number.POSITIVE_INFINITY);
    const next = fallbacks.shift();
    let widths = fitWidths(keptColumns, keptRows, width, tight, soft);
    if (!widths.fits && next === undefined) widths = fitWidths(keptColumns, keptRows, width, tight, hard);
    if (widths.fits || next === undefined) {
      return { lines: render(keptColumns, keptRows, widths.widths, paint, tight), dropped: [...dropped], narrowed: said };
    }
    if ('drop' in next) dropped.add(next.drop);
    else {
      for (const h of next.narrow) narrowed.add(h);
      said.push(`${next.narrow.join(' and ')} ${next.as}`);
    }
  }
}

/** Column widths after cutting the shrinkable columns (widest first) toward `width`. */
function fitWidths(
  columns: readonly Column[],
  rows: readonly (readonly Cell[])[],
  width: number,
  tight: boolean,
  floor: (c: Column, i: number) => number,
): { widths: number[]; fits: boolean } {
  const widths = columns.map((c, i) => Math.max(c.header.length, ...rows.map((r) => r[i]?.text.length ?? 0)));
  const total = () => widths.reduce((s, w, i) => s + w + gapBefore(columns, i, tight), 0);
  while (total() > width) {
    let widest = -1;
    columns.forEach((c, i) => {
      if (c.shrinkable && widths[i]! > floor(c, i) && (widest < 0 || widths[i]! > widths[widest]!)) widest = i;
    });
    if (widest < 0) break;
    widths[widest] = Math.max(floor(columns[widest]!, widest), widths[widest]! - (total() - width));
  }
  return { widths, fits: total() <= width };
}

function render(columns: readonly Column[], rows: readonly (readonly Cell[])[], widths: readonly number[], paint: Paint, tight: boolean): string[] {
  const line = (cells: readonly Cell[], header: boolean) =>
    cells
      .map((cell, i) => {
        const w = widths[i]!;
        const text = cell.text.length > w && cell.fit ? cut(cell.fit(w), w) : cut(cell.text, w);
        const last = i === cells.length - 1;
        const padded = columns[i]!.align === 'right' ? text.padStart(w) : last ? text : text.padEnd(w);
        const styled = header ? paint('bold', padded) : cell.style ? paint(cell.style, padded) : padded;
        return `${' '.repeat(gapBefore(columns, i, tight))}${styled}`;
      })
      .join('')
      .trimEnd();
  return [line(columns.map((c) => ({ text: c.header })), true), ...rows.map((r) => line(r, false))];
}

/** The line saying what a grid left out to fit, or none. */
export function fallbackNote(g: Grid, width: number, wider = '-o wide'): string[] {
  const parts: string[] = [];
  if (g.dropped.length > 0) parts.push(`${g.dropped.join(', ')} left out`);
  parts.push(...g.narrowed);
  if (parts.length === 0) return [];
  return wrap(`(${width} columns: ${parts.join('; ')}; a wider terminal or ${wider} shows them)`, width, '  ', '');
}
