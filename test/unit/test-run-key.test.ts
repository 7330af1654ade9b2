import { describe, expect, it } from 'vitest'
import { testRunKey } from '../../src/rewrite/tool-kind.ts'

describe('which tests a shell command runs', () => {
  it('is the same run whatever it prints through, with what flags or settings', () => {
    const plain = testRunKey('npx jest tests/unit/a.test.ts')
    expect(plain).toBeDefined()
    for (const variant of [
      'NODE_OPTIONS=--experimental-vm-modules npx jest tests/unit/a.test.ts --verbose 2>&1 | tail -200',
      'npx jest tests/unit/a.test.ts --no-coverage 2>&1 | tee logs/out.txt',
      'cd repo && npx jest tests/unit/a.test.ts --runInBand',
      'bash -lc npx jest tests/unit/a.test.ts',
    ])
      expect(testRunKey(variant)).toBe(plain)
  })

  it('tells different tests, runners and suites apart', () => {
    const keys = [
      'npx jest tests/unit/a.test.ts',
      'npx jest tests/unit/b.test.ts',
      'npm run test:unit',
      'npm run test:integration',
      'python -m pytest tests/test_x.py',
      'go test ./...',
      'cargo test',
    ].map(testRunKey)
    expect(keys.every((key) => key !== undefined)).toBe(true)
    expect(new Set(keys).size).toBe(keys.length)
  })

  it('is no test run for commands that only handle test files, or run something else', () => {
    for (const command of [
      'python reproduce.py',
      'git diff',
      'test -f tests/a.py && echo yes',
      "sed -i 's/a/b/' tests/unit/a.test.ts",
      'cat tests/unit/a.test.ts',
      'ls tests/',
      'mkdir -p tests/fixtures',
      'node scripts/attestation.js',
      'echo contest',
      "python - <<'PY'\nimport pytest; pytest.main(['tests/a.py'])\nPY",
    ])
      expect(testRunKey(command), command).toBeUndefined()
  })
})
