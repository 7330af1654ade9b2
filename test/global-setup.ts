import { execFileSync } from 'node:child_process'

/**
 * Tests that start ctxgate as a process run the built CLI (dist/cli.js): starting it through tsx
 * compiled the whole source tree again for every process. The build runs only when a source file
 * is newer than dist/, the same check `npm install` makes (src/cli/build-if-stale.mjs).
 */
export default function buildIfStale(): void {
  execFileSync(process.execPath, ['src/cli/build-if-stale.mjs'], { stdio: 'inherit' })
}
