import { describe, expect, it } from 'vitest'
import { providers } from '../../src/providers/registry.ts'
import { backoffMs, decideRetry, retryAfterMs, type RetryPolicy } from '../../src/upstream/retry-policy.ts'

const policy: RetryPolicy = { maxAttempts: 3, baseDelayMs: 500, maxDelayMs: 8_000, maxTotalWaitMs: 30_000 }
/** An attempt at the Anthropic upstream, whose overload status (529) the provider registry names. */
const outcome = (status: number | undefined, headers: Record<string, string> = {}, attempt = 1, waitedMs = 0) => ({
  status,
  headers,
  attempt,
  waitedMs,
  overloadStatus: providers.anthropic.overloadStatus,
})
const noJitter = () => 0

describe('decideRetry', () => {
  it.each([
    [undefined, 'connection'],
    [408, 'status_408'],
    [409, 'status_409'],
    [429, 'status_429'],
    [500, 'status_5xx'],
    [502, 'status_5xx'],
    [503, 'status_5xx'],
    [504, 'status_5xx'],
    [529, 'status_529'],
  ] as const)('retries %s as %s', (status, reason) => {
    expect(decideRetry(outcome(status), policy, noJitter)).toEqual({ retry: true, delayMs: 500, reason })
  })

  it("counts a 529 as any 5xx where the provider registry names no overload status (OpenAI's)", () => {
    expect(providers.openai.overloadStatus).toBeUndefined()
    expect(decideRetry({ ...outcome(529), overloadStatus: undefined }, policy, noJitter)).toEqual({
      retry: true,
      delayMs: 500,
      reason: 'status_5xx',
    })
  })

  it.each([200, 201, 400, 401, 403, 404, 413, 422])('does not retry %i', (status) => {
    expect(decideRetry(outcome(status), policy, noJitter).retry).toBe(false)
  })

  it('never retries a 400, even when told to', () => {
    expect(decideRetry(outcome(400, { 'x-should-retry': 'true' }), policy).retry).toBe(false)
  })

  it('obeys x-should-retry before the status', () => {
    expect(decideRetry(outcome(503, { 'x-should-retry': 'false' }), policy).retry).toBe(false)
    expect(decideRetry(outcome(404, { 'x-should-retry': 'true' }), policy, noJitter)).toMatchObject({
      retry: true,
      reason: 'should_retry_header',
    })
  })

  it('stops at the attempt limit', () => {
    expect(decideRetry(outcome(529, {}, 2), policy).retry).toBe(true)
    expect(decideRetry(outcome(529, {}, 3), policy).retry).toBe(false)
  })

  it('uses the server hint for the delay, and gives up when it would pass the total wait', () => {
    expect(decideRetry(outcome(429, { 'retry-after': '2' }), policy)).toMatchObject({ retry: true, delayMs: 2_000 })
    expect(decideRetry(outcome(429, { 'retry-after': '2' }, 1, 29_000), policy).retry).toBe(false)
    expect(decideRetry(outcome(429, { 'retry-after': '120' }), policy).retry).toBe(false)
  })
})

describe('retryAfterMs', () => {
  it('prefers retry-after-ms, then seconds, then an HTTP date', () => {
    expect(retryAfterMs({ 'retry-after-ms': '250', 'retry-after': '9' })).toBe(250)
    expect(retryAfterMs({ 'retry-after': '1.5' })).toBe(1_500)
    const now = Date.parse('2026-11-30T10:00:00Z')
    expect(retryAfterMs({ 'retry-after': 'Mon, 30 Nov 2026 10:00:03 GMT' }, now)).toBe(3_000)
    expect(retryAfterMs({ 'retry-after': 'Mon, 30 Nov 2026 09:00:00 GMT' }, now)).toBe(0)
  })

  it('ignores what it cannot read', () => {
    expect(retryAfterMs({})).toBeUndefined()
    expect(retryAfterMs({ 'retry-after': 'soon' })).toBeUndefined()
    expect(retryAfterMs({ 'retry-after-ms': '-5' })).toBeUndefined()
  })
})

describe('backoffMs', () => {
  it('doubles from the base, caps at the maximum and takes off at most 25%', () => {
    expect(backoffMs(1, policy, noJitter)).toBe(500)
    expect(backoffMs(2, policy, noJitter)).toBe(1_000)
    expect(backoffMs(10, policy, noJitter)).toBe(8_000)
    expect(backoffMs(1, policy, () => 0.999)).toBeGreaterThanOrEqual(375)
  })
})
