// EventBridge's event-pattern matching, for the part of the syntax this project's rules use: every key
// of the pattern must match; a leaf is an array of accepted values, each an exact value or `{prefix}`;
// an object descends into the event's field of the same name.
export function matchesEventPattern(pattern: Readonly<Record<string, unknown>>, event: unknown): boolean {
  if (typeof event !== 'object' || event === null || Array.isArray(event)) return false;
  return Object.entries(pattern).every(([key, expected]) => {
    const actual = (event as Record<string, unknown>)[key];
    if (!Array.isArray(expected)) return matchesEventPattern(expected as Record<string, unknown>, actual);
    return expected.some((value: unknown) =>
      typeof value === 'object' && value !== null && 'prefix' in value
        ? typeof actual === 'string' && actual.startsWith(String((value as { prefix: unknown }).prefix))
        : actual === value,
    );
  });
}
