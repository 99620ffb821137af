// Mutation testing of the actuator and the in-flight protection: `npm run mutation`.
// Tests: vitest.mutation.config.ts (which files, and why the fault-injection campaigns are not among them).
// Reports: reports/mutation/ (html, json); incremental state: reports/stryker-incremental.json (a run
// re-tests only the mutants whose code or covering tests changed; `npm run mutation -- --force` for all).
// Concurrency 2 on the 2-core machines this runs on (`npm run mutation -- --concurrency 1` to leave a
// core to others).
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts' },
  mutate: ['src/app/act/**/*.ts', 'src/core/disruption/inFlight.ts'],
  mutator: {
    // The texts of notes, errors and events: a reworded message is not a safety property, and the
    // string literals that do carry behaviour (steps, results, actuator kinds) are literal-union types,
    // whose mutants TypeScript rejects. 310 of the ~2,200 mutants, each a full run of its tests.
    excludedMutations: ['StringLiteral'],
  },
  coverageAnalysis: 'perTest',
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  concurrency: 2,
  // Above Stryker's 5 s default: the machine is shared, and a run slowed down by others must not count
  // as a kill (a Timeout counts as detected).
  timeoutMS: 30_000,
  reporters: ['html', 'clear-text', 'json', 'progress'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false, maxTestsToLog: 0 },
  thresholds: { high: 90, low: 85, break: null },
  tempDirName: '.stryker-tmp',
  // Only what the tests read (no demo, bench, infra, dist): a smaller sandbox.
  ignorePatterns: ['/bench', '/demo', '/infra', '/dist', '/.serverless', '/.esbuild', '/coverage', '/.tmp', '/replay-demo.html'],
};
