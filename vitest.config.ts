import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/globalSetup.ts'],
    testTimeout: 60_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Two workers on the 2-core machines this runs on (the default keeps one core free, and so runs one
    // file at a time): most of the suite waits on loopback servers and child processes, not on the CPU.
    maxWorkers: 2,
    // Tests only: the AWS SDK warns once per process that its 2027 releases will need Node 22 (we run
    // on Node 20 here and deploy nodejs22.x); eleven copies of it hid the test output.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
