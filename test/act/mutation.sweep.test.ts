// The sweep's own rules, with hand-written fakes for its ports (the worlds in sweep.test.ts show the whole
// rollback an orphan gets; here: what command is stored, and when the sweep stops or goes on).
import { describe, expect, it } from 'vitest';
import { orphanCommand, sweepOrphans } from '../../src/app/act/sweep.ts';
import { parseDetail } from '../../src/app/act/commandDetail.ts';
import { DEFAULT_ACT_OPTIONS } from '../../src/app/act/types.ts';
import type { RunContext } from '../../src/app/act/commandRunner.ts';
import type { OurInstance } from '../../src/core/ports/actuator.ts';
import { StateConflictError } from '../../src/core/state/errors.ts';
import type { DisruptionCommand } from '../../src/core/state/types.ts';
import type { Orphan } from '../../src/core/disruption/orphans.ts';

const NOW = Date.UTC(2026, 10, 26, 12);
const HOUR = 3_600_000;

const orphan = (over: Partial<Orphan> = {}): Orphan => ({ actuator: 'ec2', ref: 'i-1', why: 'instance i-1 has had no Node', ...over });
const oldInstance = (id: string): OurInstance => ({ instanceId: id, state: 'running', launchedAt: NOW - HOUR });

interface Fakes {
  instances?: readonly OurInstance[];
  putCommand?: (command: DisruptionCommand) => Promise<DisruptionCommand>;
  remainingMs?: number;
  leaseHeld?: boolean;
}

function context(fakes: Fakes): { ctx: RunContext; stored: string[] } {
  const stored: string[] = [];
  const deps = {
    instances: { listOurs: async () => fakes.instances ?? [] },
    now: () => NOW,
    remainingMs: () => fakes.remainingMs ?? 10 * 60_000,
    store: {
      putCommand:
        fakes.putCommand ??
        (async (command: DisruptionCommand) => {
          stored.push(command.id);
          return command;
        }),
    },
  };
  const ctx = { deps, options: DEFAULT_ACT_OPTIONS, leaseHeld: async () => fakes.leaseHeld ?? true } as unknown as RunContext;
  return { ctx, stored };
}

const sweep = (ctx: RunContext) => sweepOrphans(ctx, { unfinished: [], unreadable: new Set(), nodes: [] });

describe('the command an orphan gets', () => {
  it('carries everything known of the orphan', () => {
    const command = orphanCommand(
      orphan({ instanceId: 'i-1', nodeName: 'n-1', nodePool: 'default', instanceType: 'm5.large', zone: 'us-east-1a', capacityType: 'spot' }),
      NOW,
    );
    expect(command).toMatchObject({ id: 'orphan-i-1', createdAt: NOW, updatedAt: NOW, nodes: [], method: 'emptiness', reason: 'Orphaned', step: 'rollingBack', version: 0 });
    expect(command.replacements).toEqual([
      { instanceTypes: ['m5.large'], capacityType: 'spot', zones: ['us-east-1a'], pricePerHour: 0, nodePool: 'default', actuator: 'ec2' },
    ]);
    expect(command.launched).toEqual([{ index: 0, ref: 'i-1', instanceId: 'i-1', nodeName: 'n-1' }]);
    expect(parseDetail(command.detail)).toMatchObject({ rollbackWhy: 'instance i-1 has had no Node', progressAt: NOW, note: 'removing: instance i-1 has had no Node' });
  });

  it('leaves out what is not known: no type, zone, pool, instance or Node; on-demand by default', () => {
    const command = orphanCommand(orphan({ actuator: 'karpenter', ref: 'claim-1' }), NOW);
    expect(command.replacements).toEqual([{ instanceTypes: [], capacityType: 'on-demand', zones: [], pricePerHour: 0, actuator: 'karpenter' }]);
    expect(command.replacements?.[0]).not.toHaveProperty('nodePool');
    expect(command.launched).toEqual([{ index: 0, ref: 'claim-1' }]);
    expect(command.launched![0]).not.toHaveProperty('instanceId');
    expect(command.launched![0]).not.toHaveProperty('nodeName');
  });
});

describe('when the sweep stops, and when it goes on', () => {
  it('stores one command per orphan while time and the lease last', async () => {
    const { ctx, stored } = context({ instances: [oldInstance('i-1'), oldInstance('i-2')] });
    const result = await sweep(ctx);
    expect(stored).toEqual(['orphan-i-1', 'orphan-i-2']);
    expect(result.runners.map((r) => r.id)).toEqual(['orphan-i-1', 'orphan-i-2']);
    expect(result.errors).toEqual([]);
  });

  it.each([
    { name: 'less time left than the margin', remainingMs: DEFAULT_ACT_OPTIONS.marginMs - 1, leaseHeld: true, expected: [] },
    { name: 'exactly the margin left', remainingMs: DEFAULT_ACT_OPTIONS.marginMs, leaseHeld: true, expected: ['orphan-i-1', 'orphan-i-2'] },
    { name: 'the lease lost, with time to spare', remainingMs: 10 * 60_000, leaseHeld: false, expected: [] },
  ])('$name', async ({ remainingMs, leaseHeld, expected }) => {
    const { ctx, stored } = context({ instances: [oldInstance('i-1'), oldInstance('i-2')], remainingMs, leaseHeld });
    const result = await sweep(ctx);
    expect(stored).toEqual(expected);
    expect(result.runners).toHaveLength(expected.length);
  });

  it('an orphan another pass stored first is left to it, silently, and the next one is still stored', async () => {
    const stored: string[] = [];
    const { ctx } = context({
      instances: [oldInstance('i-1'), oldInstance('i-2')],
      putCommand: async (command) => {
        if (command.id === 'orphan-i-1') throw new StateConflictError([`command ${command.id}`], 'putCommand');
        stored.push(command.id);
        return command;
      },
    });
    const result = await sweep(ctx);
    expect(stored).toEqual(['orphan-i-2']);
    expect(result.runners.map((r) => r.id)).toEqual(['orphan-i-2']);
    expect(result.errors).toEqual([]);
  });

  it('any other failure to store is reported, and the next orphan is still stored', async () => {
    const stored: string[] = [];
    const { ctx } = context({
      instances: [oldInstance('i-1'), oldInstance('i-2')],
      putCommand: async (command) => {
        if (command.id === 'orphan-i-1') throw new Error('throttled');
        stored.push(command.id);
        return command;
      },
    });
    const result = await sweep(ctx);
    expect(result.errors).toEqual(['sweeping i-1: throttled']);
    expect(stored).toEqual(['orphan-i-2']);
    expect(result.runners.map((r) => r.id)).toEqual(['orphan-i-2']);
  });
});
