import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.ts'
import { limitsFor } from '../../src/config/model-limits.ts'
import { ConfigError } from '../../src/errors.ts'

function tempFile(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'ctxgate-config-')), 'config.yaml')
  writeFileSync(path, text)
  return path
}

function problemsOf(run: () => unknown): readonly string[] {
  try {
    run()
  } catch (error) {
    if (error instanceof ConfigError) return error.issues
    throw error
  }
  throw new Error('expected a ConfigError')
}

describe('loadConfig', () => {
  it('has useful defaults with no input at all', () => {
    const config = loadConfig()
    expect(config.server).toMatchObject({ host: '127.0.0.1', port: 8787, bodyLimitBytes: 32 * 1024 * 1024 })
    expect(config.upstreams.anthropic.url).toBe('https://api.anthropic.com')
    expect(config.upstreams.openai.url).toBe('https://api.openai.com')
    expect(config.upstream.headersTimeoutMs).toBeGreaterThanOrEqual(600_000)
    expect(Object.isFrozen(config.server)).toBe(true)
  })

  it('layers file, environment, flags and overrides in that order', () => {
    const file = tempFile('server:\n  port: 9000\n  host: 0.0.0.0\nlog:\n  level: debug\n')
    const config = loadConfig({
      env: {
        CTXGATE_CONFIG: file,
        CTXGATE_PORT: '9001',
        CTXGATE_ANTHROPIC_URL: 'http://127.0.0.1:1234/prefix',
        CTXGATE_LOG_LEVEL: 'warn',
      },
      flags: { port: '9002' },
      overrides: { retry: { maxAttempts: 1 } },
    })
    expect(config.server).toMatchObject({ host: '0.0.0.0', port: 9002 })
    expect(config.log.level).toBe('warn')
    expect(config.upstreams.anthropic.url).toBe('http://127.0.0.1:1234/prefix')
    expect(config.retry.maxAttempts).toBe(1)
  })

  it('lists every problem at once, naming the variable or flag to fix', () => {
    const problems = problemsOf(() =>
      loadConfig({ env: { CTXGATE_PORT: 'eighty', CTXGATE_OPENAI_URL: 'ftp://x', CTXGATE_LOG_LEVEL: 'loud' } }),
    )
    expect(problems.join('\n')).toMatch(/CTXGATE_PORT: expected a whole number, got "eighty"/)
    expect(problems.join('\n')).toMatch(
      /upstreams\.openai\.url \(env CTXGATE_OPENAI_URL, flag --openai-url\): must be an http:\/\/ or https:\/\/ URL/,
    )
    expect(problems.join('\n')).toMatch(/log\.level \(env CTXGATE_LOG_LEVEL, flag --log-level\)/)
  })

  it('rejects unknown keys and unreadable files with the path in the message', () => {
    const problems = problemsOf(() => loadConfig({ flags: { config: tempFile('sever:\n  port: 1\n') } }))
    expect(problems.join('\n')).toMatch(/sever/)
    const missing = problemsOf(() => loadConfig({ flags: { config: '/nonexistent/ctxgate.yaml' } }))
    expect(missing[0]).toMatch(
      /\/nonexistent\/ctxgate\.yaml could not be read \(ENOENT\); check --config \/ CTXGATE_CONFIG/,
    )
  })

  it('accepts off for an optional port', () => {
    expect(loadConfig({ env: { CTXGATE_METRICS_PORT: '9464' } }).metrics.port).toBe(9464)
    expect(loadConfig({ env: { CTXGATE_METRICS_PORT: 'off' } }).metrics.port).toBeNull()
  })

  it('refuses client auth with admin endpoints open to anyone, and names the fix', () => {
    const tokens = 'client-token-0123456789abcdef'
    const open = problemsOf(() => loadConfig({ env: { CTXGATE_AUTH_TOKENS: tokens } })).join('\n')
    expect(open).toMatch(/CTXGATE_AUTH_TOKENS.*CTXGATE_ADMIN_TOKEN.*CTXGATE_METRICS_PORT.*loopback/)
    // A separate port on every interface is still open to the network.
    expect(
      problemsOf(() =>
        loadConfig({
          env: { CTXGATE_AUTH_TOKENS: tokens, CTXGATE_METRICS_PORT: '9464', CTXGATE_METRICS_HOST: '0.0.0.0' },
        }),
      ),
    ).toHaveLength(1)
    // Either fix is accepted.
    expect(
      loadConfig({ env: { CTXGATE_AUTH_TOKENS: tokens, CTXGATE_ADMIN_TOKEN: 'admin-token-0123456789' } }).auth.tokens,
    ).toEqual([tokens])
    expect(loadConfig({ env: { CTXGATE_AUTH_TOKENS: tokens, CTXGATE_METRICS_PORT: '9464' } }).metrics.host).toBe(
      '127.0.0.1',
    )
  })

  it('merges a user models: list into the defaults instead of replacing them', () => {
    const defaults = loadConfig().models
    const file = tempFile(
      'models:\n  - { match: "claude-*", window: 1000000 }\n  - { match: "qwen3-coder*", window: 262144 }\n',
    )
    const config = loadConfig({ flags: { config: file } })
    expect(config.models).toHaveLength(defaults.length + 1)
    // A new pattern goes in front, taking the fields it leaves out from the entry that served it before (the catch-all).
    expect(config.models[0]).toEqual({
      ...defaults.find((entry) => entry.match === '*'),
      match: 'qwen3-coder*',
      window: 262144,
    })
    // A known pattern changes in place, only the fields given; more specific defaults still win.
    expect(limitsFor(config, 'claude-sonnet-4-5')).toMatchObject({
      match: 'claude-*',
      window: 1_000_000,
      minCacheableTokens: 1024,
    })
    expect(limitsFor(config, 'claude-opus-4-6')).toMatchObject({ match: 'claude-opus-4-[5-7]*', window: 200_000 })
    expect(limitsFor(config, 'gpt-4o')?.window).toBe(128_000)
  })

  it('refuses a models: that is not a list, and an incomplete entry, naming the field', () => {
    expect(problemsOf(() => loadConfig({ flags: { config: tempFile('models: 5\n') } })).join('\n')).toMatch(
      /models: must be a list/,
    )
    const bad = problemsOf(() => loadConfig({ flags: { config: tempFile('models:\n  - { window: 1000 }\n') } }))
    expect(bad.join('\n')).toMatch(/models\.0\.match/)
  })

  it('takes an upstream URL written with a trailing /v1 the way the SDKs write it', () => {
    const config = loadConfig({
      env: { CTXGATE_OPENAI_URL: 'http://127.0.0.1:8000/v1', CTXGATE_ANTHROPIC_URL: 'http://127.0.0.1:4000/v1/' },
    })
    expect(config.upstreams.openai.url).toBe('http://127.0.0.1:8000')
    expect(config.upstreams.anthropic.url).toBe('http://127.0.0.1:4000')
    expect(loadConfig({ flags: { 'openai-url': 'http://litellm:4000/openai/v1' } }).upstreams.openai.url).toBe(
      'http://litellm:4000/openai',
    )
    expect(loadConfig({ flags: { 'openai-url': 'http://h/v1beta' } }).upstreams.openai.url).toBe('http://h/v1beta')
  })

  it('refuses a metrics port equal to the proxy port, naming the variable and flag', () => {
    const problems = problemsOf(() => loadConfig({ env: { CTXGATE_PORT: '9100', CTXGATE_METRICS_PORT: '9100' } }))
    expect(problems.join('\n')).toMatch(/metrics\.port \(env CTXGATE_METRICS_PORT, flag --metrics-port\) is 9100/)
    expect(loadConfig({ env: { CTXGATE_PORT: '0', CTXGATE_METRICS_PORT: '0' } }).metrics.port).toBe(0)
  })
})

describe('default model limits', () => {
  const config = loadConfig()
  it.each([
    ['gpt-4o', 128_000],
    ['gpt-4o-2024-08-06', 128_000],
    ['gpt-4o-mini-2024-07-18', 128_000],
    ['gpt-4.1-mini-2025-04-14', 1_047_576],
    ['gpt-5', 400_000],
    ['o4-mini', 200_000],
    ['gpt-3.5-turbo', 16_385],
    ['claude-sonnet-4-5-20250929', 200_000],
  ])('%s has a %i-token window', (model, window) => {
    expect(limitsFor(config, model)?.window).toBe(window)
  })

  it('keeps GPT-5 prompts under its 272k input limit, not 90% of the whole window', () => {
    const limits = limitsFor(config, 'gpt-5-codex')
    expect(limits?.budget).toBeLessThan(272_000)
    expect(limits?.budget).toBeGreaterThan(1)
  })
})
