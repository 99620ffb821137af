// The CLI's `--state FILE` (docs/file-formats.md, "The state file"): the same state the Lambda keeps in
// DynamoDB, as one JSON file.
//
// - A missing (or zero-length) file is an empty state; its directory must exist.
// - Every change is a read-modify-write of the whole file under a lock file (`FILE.lock`, created
//   exclusively, removed after; a lock older than `staleLockMs` is from a dead process and is broken),
//   written atomically: temp file in the same directory, fsync, rename, fsync of the directory. A crash
//   leaves either the old file or the new one, never half of one.
// - A file that is not valid JSON or not of the expected shape is an `InputError` naming the file and the
//   field. It is never silently replaced by an empty state: that would forget grace periods and
//   emptiness times without anyone noticing.
// - The versions and the lease are checked as the DynamoDB store checks them, so two CLI runs sharing a
//   file cannot overwrite each other's records unnoticed.

import { randomBytes } from 'node:crypto';
import { readlinkSync } from 'node:fs';
import { open, readFile, rename, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { InputError } from '../../core/errors.ts';
import { applyChanges, diffPassState } from '../../core/state/diff.ts';
import { StateConflictError, StateStoreError } from '../../core/state/errors.ts';
import { LEDGER_RETENTION_MS, readLedgerEntry, type LedgerEntry } from '../../core/state/ledger.ts';
import type { StateStore } from '../../core/state/ports.ts';
import {
  commandExpiresAt,
  emptyPassState,
  type ClusterState,
  type DisruptionCommand,
  type LeaseState,
  type NodeState,
  type PassState,
} from '../../core/state/types.ts';
import { INPUT_LIMITS, readBoundedText } from '../files/boundedText.ts';
import {
  isoTime,
  readClusterState,
  readCommand,
  readNodeState,
  RecordReader,
  sortCommands,
  writeClusterState,
  writeCommand,
  writeNodeState,
  type Fail,
} from './recordCodec.ts';

/** The `format` member that marks a file as ours. */
export const STATE_FILE_FORMAT = 'eks-consolidator/state';
/** The layout version this build reads and writes. */
export const STATE_FILE_VERSION = 1;

interface StateDocument {
  readonly state: PassState;
  /** The lease; `owner` absent once released. `token` only grows (fencing). */
  readonly lease?: { readonly owner?: string; readonly until: number; readonly token?: number };
  /**
   * Ledger entries of real passes (core/state/ledger.ts), as stored; checked when listed. Absent in
   * older files.
   */
  readonly ledger?: readonly unknown[];
}

export interface FileStateStoreOptions {
  /** How long to wait for another process's lock on the file (default 5 s). */
  readonly lockTimeoutMs?: number;
  /** A lock file older than this is left over from a dead process (default 30 s). */
  readonly staleLockMs?: number;
  /**
   * The pass time (the CLI's --now). When given, stored times that record something that already
   * happened may not lie later than it by more than an hour (recordCodec.ts, CLOCK_SKEW_ALLOWANCE_MS);
   * checked on every read, the first of which comes before anything is written.
   */
  readonly passTimeMs?: number;
}

export class FileStateStore implements StateStore {
  private readonly lockTimeoutMs: number;
  private readonly staleLockMs: number;
  private readonly passTimeMs: number | undefined;
  /** The pass time of the last `load`, used by `save` when it is not given one. */
  private loadedAtMs: number | undefined;
  /**
   * The lease this store took. While set, every write checks, under the file lock, that the file's lease
   * is still this one (owner and token): a run that lost its lease can no longer write (fencing).
   */
  private held: { readonly owner: string; readonly token: number } | undefined;

  constructor(
    readonly path: string,
    options: FileStateStoreOptions = {},
  ) {
    // An empty path names no file at all (the final rename would fail): bad input, said before any work.
    if (path === '') throw new InputError('', 'path', 'the state file path is empty');
    this.lockTimeoutMs = options.lockTimeoutMs ?? 5_000;
    this.staleLockMs = options.staleLockMs ?? 30_000;
    this.passTimeMs = options.passTimeMs;
  }

  async load(nowMs?: number): Promise<PassState> {
    const { state } = await this.read();
    this.loadedAtMs = nowMs;
    return nowMs === undefined ? state : withoutExpired(state, nowMs);
  }

  async save(next: PassState, previous: PassState, nowMs?: number): Promise<PassState> {
    const now = nowMs ?? this.loadedAtMs;
    const changes = diffPassState(next, previous);
    const conflicts = await this.update('save', (doc) => {
      const conflicts: string[] = [];
      const nodes: Record<string, NodeState> = {};
      for (const [name, record] of Object.entries(doc.state.nodes)) {
        // Tidy up: records that expired and that this pass did not read are dropped.
        if (now === undefined || record.expiresAt > now || next.nodes[name] !== undefined) nodes[name] = record;
      }
      for (const record of changes.putNodes) {
        if (versionMatches(nodes[record.name], record.version, now)) nodes[record.name] = { ...record, version: record.version + 1 };
        else conflicts.push(`node ${record.name}`);
      }
      for (const record of changes.deleteNodes) {
        const stored = nodes[record.name];
        if (stored === undefined || stored.version === record.version) delete nodes[record.name];
        else conflicts.push(`node ${record.name}`);
      }
      let cluster: ClusterState = doc.state.cluster;
      if (changes.cluster) {
        if (cluster.version === changes.cluster.version) cluster = { ...changes.cluster, version: changes.cluster.version + 1 };
        else conflicts.push('cluster');
      }
      const commands = now === undefined ? doc.state.commands : doc.state.commands.filter((c) => !expired(commandExpiresAt(c), now));
      return { doc: { ...doc, state: { nodes, cluster, commands } }, result: conflicts };
    });
    if (conflicts.length > 0) throw new StateConflictError(conflicts, 'save');
    return applyChanges(next, changes);
  }

  async acquireLease(owner: string, nowMs: number, ttlMs: number): Promise<boolean> {
    const token = await this.update('acquireLease', (doc) => {
      const lease = doc.lease;
      const held = lease?.owner !== undefined && lease.owner !== owner && lease.until > nowMs && !deadLocalProcess(lease.owner);
      if (held) return { result: undefined };
      const token = (lease?.token ?? 0) + 1;
      return { doc: { ...doc, lease: { owner, until: nowMs + ttlMs, token } }, result: token };
    }, false);
    if (token === undefined) return false;
    this.held = { owner, token };
    return true;
  }

  async renewLease(owner: string, nowMs: number, ttlMs: number): Promise<boolean> {
    const ok = await this.update('renewLease', (doc) => {
      if (doc.lease?.owner !== owner || (this.held?.owner === owner && doc.lease.token !== this.held.token)) return { result: false };
      return { doc: { ...doc, lease: { ...doc.lease, until: nowMs + ttlMs } }, result: true };
    }, false);
    if (!ok && this.held?.owner === owner) this.held = undefined;
    return ok;
  }

  async releaseLease(owner: string): Promise<void> {
    if (this.held?.owner === owner) this.held = undefined;
    await this.update('releaseLease', (doc) => {
      if (doc.lease?.owner !== owner) return { result: undefined };
      // The token stays: it must never go back.
      return { doc: { ...doc, lease: { until: 0, ...(doc.lease.token === undefined ? {} : { token: doc.lease.token }) } }, result: undefined };
    }, false);
  }

  async readLease(): Promise<LeaseState | undefined> {
    const lease = (await this.read()).lease;
    return lease?.owner === undefined ? undefined : { owner: lease.owner, until: lease.until };
  }

  async putCommand(cmd: DisruptionCommand, expectedVersion?: number): Promise<DisruptionCommand> {
    const stored: DisruptionCommand = { ...cmd, version: (expectedVersion ?? 0) + 1 };
    const ok = await this.update('putCommand', (doc) => {
      const current = doc.state.commands.find((c) => c.id === cmd.id);
      if (expectedVersion === undefined ? current !== undefined : current?.version !== expectedVersion) return { result: false };
      const commands = [...doc.state.commands.filter((c) => c.id !== cmd.id), stored];
      return { doc: { ...doc, state: { ...doc.state, commands } }, result: true };
    });
    if (!ok) throw new StateConflictError([`command ${cmd.id}`], 'putCommand');
    return stored;
  }

  async appendLedger(entry: LedgerEntry): Promise<void> {
    await this.update('appendLedger', (doc) => {
      // Entries older than the retention are dropped as new ones come (the file must not grow forever).
      const kept = (doc.ledger ?? []).filter((raw) => {
        const at = (raw as { at?: unknown } | null)?.at;
        return typeof at !== 'number' || at > entry.at - LEDGER_RETENTION_MS;
      });
      return { doc: { ...doc, ledger: [...kept, entry] }, result: undefined };
    });
  }

  async listLedger(): Promise<LedgerEntry[]> {
    const { ledger = [] } = await this.read();
    return ledger
      .map((raw, i) =>
        readLedgerEntry(raw, (field, problem) => {
          throw new InputError('', `ledger[${i}]${field.startsWith('entry') ? field.slice(5) : field === '' ? '' : `.${field}`}`, problem).inFile(this.path);
        }),
      )
      .sort((a, b) => a.at - b.at);
  }

  async listCommands(nowMs?: number): Promise<DisruptionCommand[]> {
    const { state } = await this.read();
    return [...(nowMs === undefined ? state : withoutExpired(state, nowMs)).commands];
  }

  // --- the file ---------------------------------------------------------------------------------

  private async read(): Promise<StateDocument> {
    let text: string;
    try {
      text = await readBoundedText(this.path, INPUT_LIMITS.state);
    } catch (error) {
      if (error instanceof InputError) throw error.inFile(this.path);
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') {
        await this.requireDirectory();
        return { state: emptyPassState() };
      }
      if (code === 'EISDIR') throw new InputError('', '', 'is a directory, not a state file').inFile(this.path);
      if (code === 'EACCES' || code === 'EPERM') throw new InputError('', '', 'cannot be read (permission denied)').inFile(this.path);
      throw new StateStoreError('load', { cause: error });
    }
    // A zero-length file holds no state to lose (`--state "$(mktemp)"`): same as a missing one.
    if (text.trim() === '') return { state: emptyPassState() };
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new InputError('', '', `not valid JSON (${(error as Error).message})`).inFile(this.path);
    }
    return decodeDocument(
      json,
      (field, problem) => {
        throw new InputError('', field, problem).inFile(this.path);
      },
      this.passTimeMs,
    );
  }

  private async requireDirectory(): Promise<void> {
    const dir = dirname(this.path);
    const info = await stat(dir).catch(() => undefined);
    if (!info?.isDirectory()) throw new InputError('', '', `directory ${dir} does not exist`).inFile(this.path);
  }

  /** Read-modify-write under the lock; `change` returns the new document (or none: nothing to write). */
  private async update<T>(operation: string, change: (doc: StateDocument) => { doc?: StateDocument; result: T }, fenced = true): Promise<T> {
    const unlock = await this.lock(operation);
    try {
      const current = await this.read();
      const held = this.held;
      if (fenced && held !== undefined && (current.lease?.owner !== held.owner || current.lease.token !== held.token)) {
        throw new StateConflictError(['lease'], `${operation} (this run no longer holds the lease)`);
      }
      const { doc, result } = change(current);
      if (doc) await this.writeAtomically(operation, `${JSON.stringify(encodeDocument(doc), null, 2)}\n`);
      return result;
    } finally {
      await unlock();
    }
  }

  private async lock(operation: string): Promise<() => Promise<void>> {
    await this.requireDirectory();
    const lockPath = `${this.path}.lock`;
    const deadline = Date.now() + this.lockTimeoutMs;
    for (;;) {
      try {
        const handle = await open(lockPath, 'wx');
        await handle.writeFile(`${localProcessId()}\n`);
        await handle.close();
        return () => rm(lockPath, { force: true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new StateStoreError(operation, { cause: error });
      }
      const info = await stat(lockPath).catch(() => undefined);
      const holder = info ? (await readFile(lockPath, 'utf8').catch(() => '')).trim() : '';
      // Left by a process of this machine that no longer runs (killed): broken at once.
      if (info && (Date.now() - info.mtimeMs > this.staleLockMs || (holder !== '' && deadLocalProcess(holder)))) {
        await rm(lockPath, { force: true });
        continue;
      }
      if (Date.now() > deadline) {
        throw new StateStoreError(operation, { detail: `${this.path} is locked by another process (${lockPath})` });
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  private async writeAtomically(operation: string, text: string): Promise<void> {
    const dir = dirname(this.path);
    const temp = join(dir, `.${basename(this.path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
    let handle: Awaited<ReturnType<typeof open>> | undefined;
    try {
      handle = await open(temp, 'wx', 0o644);
      await handle.writeFile(text, 'utf8');
      await handle.sync();
      await handle.close();
      handle = undefined;
      await rename(temp, this.path);
    } catch (error) {
      await handle?.close().catch(() => undefined);
      await rm(temp, { force: true });
      throw new StateStoreError(operation, { cause: error });
    }
    // Make the rename itself durable. Not every platform lets a directory be fsynced: best effort.
    const dirHandle = await open(dir, 'r').catch(() => undefined);
    await dirHandle?.sync().catch(() => undefined);
    await dirHandle?.close().catch(() => undefined);
  }
}

/**
 * `<pid>@<host>#pidns=<id>`: names a process of this machine, so that one left behind by a killed run
 * can be recognised. The PID namespace matters: containers that share a host name (two pods with the
 * same `hostname`, or `--network host`) each have their own process ids, and a process id missing here
 * may be alive in the other container.
 */
export function localProcessId(pid = process.pid): string {
  const namespace = pidNamespace();
  return `${pid}@${hostname()}${namespace === undefined ? '' : `#pidns=${namespace}`}`;
}

let cachedNamespace: { readonly id: string | undefined } | undefined;

/**
 * This process's PID namespace: the inode of /proc/self/ns/pid on Linux (`pid:[4026531836]`); the
 * platform's name where there are no PID namespaces (macOS, Windows), so process ids are unique per
 * machine there; undefined when Linux does not say (no /proc), so that nobody takes our process for dead.
 */
export function pidNamespace(): string | undefined {
  if (cachedNamespace === undefined) {
    let id: string | undefined;
    if (process.platform !== 'linux') id = process.platform;
    else {
      try {
        id = /^pid:\[(\d+)\]$/.exec(readlinkSync('/proc/self/ns/pid'))?.[1];
      } catch {
        id = undefined;
      }
    }
    cachedNamespace = { id };
  }
  return cachedNamespace.id;
}

/**
 * True when `id` (`...<pid>@<host>#pidns=<id>`, as `localProcessId` writes it, with any prefix such as
 * `cli-`) is a process of this machine and PID namespace that no longer runs. Anything else (another
 * machine, a Lambda owner, another namespace) is never taken for dead. Neither is an owner written
 * before the namespace was recorded (`<pid>@<host>`): it may be another container's, and its lease
 * (or lock file) runs out by itself.
 */
export function deadLocalProcess(id: string): boolean {
  const match = /(\d+)@([^@\s#]+)(?:#pidns=([A-Za-z0-9]+))?$/.exec(id);
  if (match === null || match[2] !== hostname()) return false;
  const namespace = pidNamespace();
  if (match[3] === undefined || namespace === undefined || match[3] !== namespace) return false;
  const pid = Number(match[1]);
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function versionMatches(stored: NodeState | undefined, expected: number, nowMs: number | undefined): boolean {
  if (expected === 0) return stored === undefined || (nowMs !== undefined && stored.expiresAt <= nowMs);
  return stored?.version === expected;
}

function expired(expiresAt: number | undefined, nowMs: number): boolean {
  return expiresAt !== undefined && expiresAt <= nowMs;
}

function withoutExpired(state: PassState, nowMs: number): PassState {
  const nodes: Record<string, NodeState> = {};
  for (const [name, record] of Object.entries(state.nodes)) if (!expired(record.expiresAt, nowMs)) nodes[name] = record;
  return { ...state, nodes, commands: state.commands.filter((c) => !expired(commandExpiresAt(c), nowMs)) };
}

// --- the file's layout ----------------------------------------------------------------------------

function decodeDocument(json: unknown, fail: Fail, passTimeMs: number | undefined): StateDocument {
  const options = passTimeMs === undefined ? {} : { passTimeMs };
  const top = RecordReader.of(json, '', fail, isoTime, options);
  // A member the format has may be left out, but not set to null: that is not what was written.
  for (const member of ['cluster', 'nodes', 'commands', 'lease', 'ledger']) {
    const shape = member === 'commands' || member === 'ledger' ? 'a list' : 'an object';
    if (top.member(member) === null) fail(member, `not ${shape} (null): give ${shape} or leave it out`);
  }
  const format = top.string('format');
  if (format !== STATE_FILE_FORMAT) fail('format', `not an eks-consolidator state file (expected "${STATE_FILE_FORMAT}")`);
  const version = top.number('version');
  if (version !== STATE_FILE_VERSION) {
    fail('version', `unsupported state file version ${version} (this build reads version ${STATE_FILE_VERSION})`);
  }

  const cluster = top.has('cluster') ? readClusterState(RecordReader.of(top.member('cluster'), 'cluster', fail, isoTime, options)) : { version: 0 };

  const nodes: Record<string, NodeState> = {};
  const rawNodes = top.has('nodes') ? top.member('nodes') : {};
  const nodesReader = RecordReader.of(rawNodes, 'nodes', fail, isoTime);
  for (const name of Object.keys(rawNodes as object)) {
    const record = readNodeState(RecordReader.of(nodesReader.member(name), `nodes.${name}`, fail, isoTime, options));
    if (record.name !== name) fail(`nodes.${name}.name`, `"${record.name}" does not match its key`);
    nodes[name] = record;
  }

  const rawCommands = top.has('commands') ? top.member('commands') : [];
  if (!Array.isArray(rawCommands)) fail('commands', 'not a list');
  const commands = (rawCommands as unknown[]).map((raw, i) =>
    readCommand(RecordReader.of(raw, `commands[${i}]`, fail, isoTime, options), fail, isoTime),
  );

  let lease: StateDocument['lease'];
  if (top.has('lease')) {
    const r = RecordReader.of(top.member('lease'), 'lease', fail, isoTime);
    const owner = r.string('owner', true);
    // The fencing token only ever grows from 1: anything but a whole number from 0 up was not written here.
    const token = r.has('token') ? r.count('token') : undefined;
    lease = { ...(owner === undefined ? {} : { owner }), until: r.time('until'), ...(token === undefined ? {} : { token }) };
  }
  const ledger = top.has('ledger') ? top.member('ledger') : undefined;
  if (ledger !== undefined && !Array.isArray(ledger)) fail('ledger', 'not a list');
  return { state: { nodes, cluster, commands: sortCommands(commands) }, ...(lease ? { lease } : {}), ...(ledger ? { ledger: ledger as unknown[] } : {}) };
}

function encodeDocument(doc: StateDocument): Record<string, unknown> {
  const nodes: Record<string, unknown> = {};
  for (const name of Object.keys(doc.state.nodes).sort()) nodes[name] = writeNodeState(doc.state.nodes[name]!, isoTime);
  return {
    format: STATE_FILE_FORMAT,
    version: STATE_FILE_VERSION,
    cluster: writeClusterState(doc.state.cluster, isoTime),
    nodes,
    commands: sortCommands(doc.state.commands).map((c) => writeCommand(c, isoTime)),
    ...(doc.lease
      ? {
          lease: {
            ...(doc.lease.owner === undefined ? {} : { owner: doc.lease.owner }),
            until: isoTime.write(doc.lease.until),
            ...(doc.lease.token === undefined ? {} : { token: doc.lease.token }),
          },
        }
      : {}),
    ...(doc.ledger && doc.ledger.length > 0 ? { ledger: doc.ledger } : {}),
  };
}
