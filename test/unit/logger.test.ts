import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'

const loggerModule = new URL('../../src/log/logger.ts', import.meta.url).pathname

function runScript(source: string): string {
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', source], {
    encoding: 'utf8',
    timeout: 20_000,
  })
  return result.stdout
}

describe('stdout logger', () => {
  it('writes lines still in its buffer when the process exits at once', () => {
    const out = runScript(`import { createLogger } from '${loggerModule}'
const logger = createLogger('info')
for (let i = 0; i < 3; i++) logger.info({ line: i }, 'buffered')
process.exit(0)`)
    const lines = out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { line: number; msg: string })
    expect(lines.map((line) => line.line)).toEqual([0, 1, 2])
  })

  it('writes a quiet process’s lines within a fraction of a second, without waiting for the buffer to fill', () => {
    const out = runScript(`import { createLogger } from '${loggerModule}'
import { writeSync } from 'node:fs'
const logger = createLogger('info')
logger.info('first')
setTimeout(() => { writeSync(1, 'MARK\\n'); process.exit(0) }, 400)`)
    // The line reached stdout before the marker written 400 ms later, so it did not wait for exit.
    expect(out.indexOf('"msg":"first"')).toBeGreaterThanOrEqual(0)
    expect(out.indexOf('"msg":"first"')).toBeLessThan(out.indexOf('MARK'))
  })
})
