import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globals: false,
    restoreMocks: true,
    testTimeout: 20_000,
    // The JSON report lets .ci/run print a plain 'N passed, N failed' line.
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results/vitest.json' },
    hookTimeout: 20_000,
  },
})
