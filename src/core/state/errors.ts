// Domain errors of the state the product keeps between passes. Store adapters translate backend
// failures (DynamoDB SDK errors, file-system errors) into these so that a pass, the Lambda handler and
// the CLI can react without knowing which backend they talk to.

/**
 * Someone else wrote a record since this pass read it (optimistic concurrency). Two passes overlapped,
 * or a previous pass died between reading and writing and a newer one already moved on. The pass that
 * gets this must not retry blindly: its view of the cluster is stale; the next scheduled pass starts over.
 */
export class StateConflictError extends Error {
  override readonly name = 'StateConflictError';
  constructor(
    /** The records that refused the write, e.g. `node ip-10-0-1-7.ec2.internal`, `command c-42`, `cluster`. */
    readonly records: readonly string[],
    /** What was being done, e.g. `save`, `putCommand`. */
    readonly operation: string,
  ) {
    super(`${operation}: ${records.join(', ')} changed since it was read (another pass wrote it)`);
  }
}

/** A stored record does not have the shape this build understands (hand-edited, or written by a newer build). */
export class StateCorruptError extends Error {
  override readonly name = 'StateCorruptError';
  constructor(
    /** The record, e.g. `NODE#ip-10-0-1-7.ec2.internal`. */
    readonly record: string,
    /** The field, e.g. `lastPodEventAt`; empty when the whole record is bad. */
    readonly field: string,
    readonly problem: string,
  ) {
    super([record, field, problem].filter((part) => part !== '').join(': '));
  }
}

/** The backend failed for another reason (throttled, unreachable, permission denied, disk full). */
export class StateStoreError extends Error {
  override readonly name = 'StateStoreError';
  constructor(
    /** The store operation, e.g. `load`, `save`, `acquireLease`. */
    readonly operation: string,
    options: { cause?: unknown; detail?: string } = {},
  ) {
    super(`state store ${operation} failed: ${options.detail ?? describe(options.cause)}`, { cause: options.cause });
  }
}

function describe(cause: unknown): string {
  if (cause instanceof Error) return `${cause.name}: ${cause.message}`;
  return String(cause);
}
