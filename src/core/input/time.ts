// Timestamps read from input (Kubernetes RFC 3339 times, `--now`, the catalog's pricesAsOf).
//
// Two rules keep every later computation honest:
// - an offset is required (`Z` or `+02:00`): without one, JavaScript reads the time in the machine's
//   local zone, and the same file would plan differently on two machines;
// - the time must lie between 1970 and 9000. Kubernetes never writes anything else, and the margin
//   above leaves room for the longest Go duration (about 292 years) to be added, so every time the
//   product derives and stores (grace periods, "until" times) is still a four-digit-year ISO time
//   that the state file can be read back with.
export const EARLIEST_TIME_MS = Date.UTC(1970, 0, 1);
export const LATEST_TIME_MS = Date.UTC(9000, 0, 1);

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Epoch ms, or a sentence saying what is wrong with `text`. */
export function parseTimestamp(text: string): number | string {
  if (!RFC3339.test(text.trim())) return 'is not an ISO 8601 / RFC 3339 time with an offset, such as 2026-11-21T12:00:00Z';
  const ms = Date.parse(text.trim().replace(' ', 'T'));
  if (Number.isNaN(ms)) return 'is not a valid date and time';
  if (ms < EARLIEST_TIME_MS || ms >= LATEST_TIME_MS) return 'is outside the supported range (1970 to 9000)';
  return ms;
}
