import { defineConfig } from 'vitest/config';
export default defineConfig({ test: { include: ['test/disruption/**/*.test.ts', 'test/efficiency/**/*.test.ts'], exclude: ['**/node_modules/**'] } });
