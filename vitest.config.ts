import { defineConfig } from 'vitest/config';

// Two projects: `unit` needs nothing but Node; `e2e` needs the test hosts that scripts/test-all.sh boots.
export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['src/**/*.test.ts', 'test/unit/**/*.test.ts'], testTimeout: 30_000 } },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          testTimeout: 600_000,
          hookTimeout: 600_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
