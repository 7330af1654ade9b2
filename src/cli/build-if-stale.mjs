// `prepare` runs on every `npm install` and on the first `npx ctxgate` in a checkout: build only
// when dist/ is missing or older than a source file, so a built checkout starts at once and the
// dist/ a running `npm start` loads is not rewritten under it.
import { execSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

const built = 'dist/cli.js'
function newestSource(dir) {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs)
  }
  return newest
}
const stale = !existsSync(built) || newestSource('src') > statSync(built).mtimeMs
if (stale) {
  process.stderr.write('ctxgate: building dist/ (first run or sources changed)…\n')
  execSync('npm run build', { stdio: 'inherit' })
}
