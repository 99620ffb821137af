import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// The tests Stryker runs against the actuator (src/app/act/) and the in-flight protection
// (src/core/disruption/inFlight.ts): `npm run mutation`, configured in stryker.config.mjs.
//
// Left out on purpose:
// - test/act/faultInjection.*.test.ts (351 crash scenarios, ~45 s per test, ~270 s in all) and
//   test/act/adversarial.*.test.ts (a campaign of whole passes in an adversarial world): with per-test
//   coverage every surviving mutant of the runner would re-run them (hours). They stay in `npm test`.
// - test/handlers/*: whole Lambda invocations, ~90 s for two files; what they reach of the actuator is
//   covered here by the act tests.
// - globalSetup (test/globalSetup.ts builds the CLI into dist/): none of these tests starts the CLI.
//
// Listed one by one (a new test file joins the mutation run when someone adds it here), cheapest
// first: Stryker stops a mutant's run at its first failing test (bail), and a file's imports (the AWS
// SDK, the Kubernetes client) cost more than most tests, so the pure tests go before the worlds.
const FILES = [
  'test/act/mutation.units.test.ts',
  'test/act/mutation.sweep.test.ts',
  'test/act/mutation.capacity.test.ts',
  'test/act/mutation.inFlight.test.ts',
  'test/app/inFlight.test.ts',
  'test/disruption/destinations.test.ts',
  'test/app/actionMetrics.test.ts',
  'test/disruption/proveCommand.test.ts',
  'test/act/mutation.runner.test.ts',
  'test/act/mutation.launch.test.ts',
  'test/act/mutation.busySet.test.ts',
  'test/act/mutation.session.test.ts',
  'test/act/mutation.start.test.ts',
  'test/act/mutation.orphanTaints.test.ts',
  'test/act/executeCommands.test.ts',
  'test/act/karpenterActuator.test.ts',
  'test/act/clockJump.test.ts',
  'test/act/emptinessLease.test.ts',
  'test/act/interruptedTaint.test.ts',
  'test/act/sweep.test.ts',
  'test/act/safety.test.ts',
  'test/act/settle.test.ts',
  'test/app/multiPass.test.ts',
];

class CheapFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification) => {
      const index = FILES.indexOf(relative(this.ctx.config.root, spec.moduleId).split('\\').join('/'));
      return index < 0 ? FILES.length : index;
    };
    return [...files].sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    // MUTATION_BASELINE=1: without the test/act/mutation.* files (the score before they were written).
    include: process.env['MUTATION_BASELINE'] === '1' ? FILES.filter((f) => !f.startsWith('test/act/mutation.')) : FILES,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // One module graph per run instead of one per file: the AWS SDK and the Kubernetes client are
    // imported once per mutant, not once per test file (Stryker runs each mutant as its own run).
    isolate: false,
    sequence: { sequencer: CheapFirst },
    maxWorkers: 2,
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
