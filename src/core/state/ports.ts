// The port a pass uses to read and write its state. Two adapters implement it: a JSON file (the CLI's
// `--state`) and one DynamoDB table (the Lambda). A pass written against this interface
// works with either.
//
// A pass goes:
//   if (!(await store.acquireLease(me, now, ttl))) return;        // another pass is running
//   const previous = await store.load(now);
//   const next = { ...previous, nodes: observeNodes(cluster, previous, now), cluster: ... };
//   ... decide; actuator: await store.putCommand(cmd) after each step ...
//   await store.save(next, previous, now);                         // only what changed
//   await store.releaseLease(me);
//
// Errors: `StateConflictError` when a record changed since it was read, `StateCorruptError` for a
// stored record of the wrong shape (the file store raises `InputError` instead: the file is user input),
// `StateStoreError` for anything else the backend reports.

import type { LedgerEntry } from './ledger.ts';
import type { DisruptionCommand, LeaseState, PassState } from './types.ts';

export interface StateStore {
  /**
   * Everything stored for the cluster. Records whose `expiresAt` is at or before `nowMs` are treated as
   * absent (DynamoDB TTL deletes late, hours late). Pass the pass time; when omitted the backend decides
   * (DynamoDB uses its clock, the file store keeps every record).
   */
  load(nowMs?: number): Promise<PassState>;

  /**
   * Writes what differs between `next` and `previous` (the state as `load` returned it): changed or new
   * node records, deleted node records, the cluster record. Each record is written on the condition that
   * its stored version is still the one read (`version`; 0 = must not exist or must have expired by
   * `nowMs`). Records that pass their condition are written even when others conflict; then it throws
   * one `StateConflictError` listing the conflicting records. Commands are not written here (see
   * `putCommand`). Resolves to the state as now stored (versions bumped).
   */
  save(next: PassState, previous: PassState, nowMs?: number): Promise<PassState>;

  /**
   * Takes the cluster's pass lease for `ttlMs`. True when taken, or already ours (then extended); false
   * when someone else holds a lease that has not expired at `nowMs`.
   */
  acquireLease(owner: string, nowMs: number, ttlMs: number): Promise<boolean>;

  /** Extends a lease we hold. False when it is no longer ours (it expired and someone else took it). */
  renewLease(owner: string, nowMs: number, ttlMs: number): Promise<boolean>;

  /** Gives the lease up if it is ours; does nothing otherwise. */
  releaseLease(owner: string): Promise<void>;

  /** The current lease, if any (expired leases included: compare `until` with the time yourself). */
  readLease(): Promise<LeaseState | undefined>;

  /**
   * Stores a command. `expectedVersion` undefined: a new command (conflict if the id exists); a number:
   * the stored version must equal it. Stores `version = (expectedVersion ?? 0) + 1` and returns the
   * command as stored. Conflict: `StateConflictError`.
   */
  putCommand(cmd: DisruptionCommand, expectedVersion?: number): Promise<DisruptionCommand>;

  /** Every stored command that has not expired at `nowMs` (same rule as `load`), oldest first. */
  listCommands(nowMs?: number): Promise<DisruptionCommand[]>;

  /**
   * Optional: command records `load` and `listCommands` skipped because this build cannot read them (a
   * step a newer build stored, a hand-edited item), since the last call; each is reported once. One bad
   * record must not stop every other command from resuming or rolling back.
   */
  takeUnreadable?(): readonly UnreadableRecord[];

  /**
   * Optional: ids of the command records the last `listCommands` skipped as unreadable. What such a
   * command launched is never swept as an orphan: a newer build's record may be a running command.
   */
  unreadableCommandIds?(): ReadonlySet<string>;

  /**
   * Optional: appends a real pass's ledger entry (what it did and saved). Stores keep entries
   * for `LEDGER_RETENTION_MS`. Written under the pass's lease; never read by a pass.
   */
  appendLedger?(entry: LedgerEntry): Promise<void>;

  /** Optional: every ledger entry kept, oldest first. */
  listLedger?(): Promise<LedgerEntry[]>;
}

/** A stored record that could not be decoded, and why. */
export interface UnreadableRecord {
  /** Its key, e.g. `CMD#cmd-1`. */
  readonly key: string;
  readonly problem: string;
}
