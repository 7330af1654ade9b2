import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { budgetWarnings } from '../../src/config/budget-warnings.ts'
import { loadConfig } from '../../src/config/load-config.ts'

const withModels = (yaml: string) => {
  const file = join(mkdtempSync(join(tmpdir(), 'ctxgate-budget-')), 'config.yaml')
  writeFileSync(file, yaml)
  return loadConfig({ flags: { config: file } })
}

describe('start-up warning for a budget that is not below its window', () => {
  it('names an entry that sets only a smaller window and keeps the absolute default budget', () => {
    const warnings = budgetWarnings(withModels('models:\n  - { match: "gpt-5*", window: 64000 }\n'))
    expect(warnings).toEqual([
      expect.stringContaining('models entry "gpt-5*": budget 244,800 is not below its window 64,000'),
    ])
  })

  it('is quiet for the defaults and for a fractional budget', () => {
    expect(budgetWarnings(loadConfig({}))).toEqual([])
    expect(budgetWarnings(withModels('models:\n  - { match: "gpt-5*", window: 64000, budget: 0.9 }\n'))).toEqual([])
  })
})
