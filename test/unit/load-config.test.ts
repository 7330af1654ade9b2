import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.ts'
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
})
