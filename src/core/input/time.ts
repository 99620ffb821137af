// Timestamps read from input (Kubernetes RFC 3339 times, `--now`, the catalog's pricesAsOf).
//
// Three rules keep every later computation honest:
// - the date and the time of day must exist (no February 30th, no 24:00), rather than roll over;
// - an offset is required (`Z` or `+02:00`): without one, JavaScript reads the time in the machine's
//   local zone, and the same file would plan differently on two machines;
// - the time must lie between 1970 and 9000. Kubernetes never writes anything else, and the margin
//   above leaves room for the longest Go duration (about 292 years) to be added, so every time the
//   product derives and stores (grace periods, "until" times) is still a four-digit-year ISO time
//   that the state file can be read back with.
export const EARLIEST_TIME_MS = Date.UTC(1970, 0, 1);
export const LATEST_TIME_MS = Date.UTC(9000, 0, 1);

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Days in `month` (1-12) of `year`, by the Gregorian leap-year rule. */
function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!;
}

/**
 * What is wrong with the date and clock fields of an RFC 3339 match, or undefined. JavaScript rolls
 * impossible values over instead of refusing them (February 30th becomes March 2nd, 24:00 the next
 * day), which would plan for a time nobody asked for.
 */
function calendarProblem(match: RegExpExecArray): string | undefined {
  // Absent parts (seconds, a `Z` offset) read as 0. (Read one by one: this runs for every timestamp of
  // every pod read.)
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  const hour = Number(match[4]);
  const minute = Number(match[5]);
  const second = Number(match[6] ?? 0);
  const offsetHours = Number(match[8] ?? 0);
  const offsetMinutes = Number(match[9] ?? 0);
  if (month < 1 || month > 12) return `is not a real calendar date: there is no month ${month}`;
  const days = daysInMonth(year, month);
  if (day < 1 || day > days) return `is not a real calendar date: ${MONTH_NAMES[month - 1]} ${year} has ${days} days`;
  if (hour > 23 || minute > 59 || second > 59) return 'is not a real time of day: hours go to 23, minutes and seconds to 59';
  if (offsetHours > 23 || offsetMinutes > 59) return 'has an impossible offset from UTC';
  return undefined;
}

/**
 * Epoch ms of an RFC 3339 time with an offset whose date and time of day exist, whatever its year, or
 * a sentence saying what is wrong with `text`. For times the product wrote itself (the state file),
 * which may lie beyond the input range: see parseTimestamp for input.
 */
export function parseRfc3339(text: string): number | string {
  const match = RFC3339.exec(text.trim());
  if (!match) return 'is not an ISO 8601 / RFC 3339 time with an offset, such as 2026-11-21T12:00:00Z';
  const impossible = calendarProblem(match);
  if (impossible !== undefined) return impossible;
  const ms = Date.parse(text.trim().replace(' ', 'T'));
  return Number.isNaN(ms) ? 'is not a valid date and time' : ms;
}

/** Epoch ms, or a sentence saying what is wrong with `text`. */
export function parseTimestamp(text: string): number | string {
  const ms = parseRfc3339(text);
  if (typeof ms === 'string') return ms;
  if (ms < EARLIEST_TIME_MS || ms >= LATEST_TIME_MS) return 'is outside the supported range (1970 to 9000)';
  return ms;
}
