import { describe, expect, it } from 'vitest'
import { billedEquivalentInput, cacheReadShare, type Usage } from '../../src/billing/usage-totals.ts'
import type { RequestOutcome } from '../../src/replay/request-outcome.ts'
import { readAnthropicAnswer } from '../../src/replay/request-outcome.ts'
import { combine, summarize } from '../../src/replay/summarize.ts'
import { withinFloor } from '../../src/replay/floor-bound.ts'

const usage = (input: number, write5m: number, read: number, write1h = 0): Usage => ({
  inputTokens: input,
  cacheWrite5mTokens: write5m,
  cacheWrite1hTokens: write1h,
  cacheReadTokens: read,
  outputTokens: 10,
})
const ok = (index: number, value: Usage): RequestOutcome => ({
  index,
  status: 200,
  refusedForLength: false,
  promptTokens: value.inputTokens + value.cacheWrite5mTokens + value.cacheWrite1hTokens + value.cacheReadTokens,
  usage: value,
})

describe('billed-equivalent input', () => {
  it('is input + 1.25 × 5-minute writes + 2 × 1-hour writes + 0.1 × reads', () => {
    expect(billedEquivalentInput(usage(1_000, 0, 0))).toBe(1_000)
    expect(billedEquivalentInput(usage(100, 4_000, 0))).toBe(5_100)
    expect(billedEquivalentInput(usage(100, 0, 10_000))).toBe(1_100)
    expect(billedEquivalentInput(usage(0, 0, 0, 3_000))).toBe(6_000)
    expect(billedEquivalentInput(usage(10, 200, 3_000, 50))).toBeCloseTo(10 + 250 + 300 + 100)
  })

  it('reports the share of prompt tokens read from cache', () => {
    expect(cacheReadShare(usage(100, 100, 800))).toBeCloseTo(0.8)
    expect(cacheReadShare(usage(0, 0, 0))).toBe(0)
  })
})

describe('summarize', () => {
  it('counts refusals, the largest prompt, prefix breaks and tokens removed against the direct run', () => {
    const direct = [
      ok(1, usage(10, 5_000, 0)),
      ok(2, usage(10, 1_000, 5_000)),
      { index: 3, status: 400, refusedForLength: true, promptTokens: 70_000, usage: usage(0, 0, 0) },
    ]
    const through = [ok(1, usage(10, 5_000, 0)), ok(2, usage(10, 3_000, 2_000)), ok(3, usage(10, 1_000, 5_000))]
    const summary = summarize(through, direct)
    expect(summary).toMatchObject({ requests: 3, refusedForLength: 0, largestPromptTokens: 6_010, prefixBreaks: 1 })
    expect(summary.tokensRemoved).toBe(6_010 - 5_010 + (70_000 - 6_010))
    const directSummary = summarize(direct)
    expect(directSummary).toMatchObject({
      refusedForLength: 1,
      largestPromptTokens: 70_000,
      prefixBreaks: 0,
      tokensRemoved: 0,
    })
    expect(combine([summary, directSummary]).requests).toBe(6)
  })
})

describe('readAnthropicAnswer', () => {
  it('reads usage from JSON, from SSE (message_start then non-null message_delta values), and refusals', () => {
    const json = readAnthropicAnswer(
      1,
      200,
      'application/json',
      JSON.stringify({
        usage: {
          input_tokens: 5,
          cache_creation_input_tokens: 300,
          cache_read_input_tokens: 700,
          cache_creation: { ephemeral_5m_input_tokens: 200, ephemeral_1h_input_tokens: 100 },
          output_tokens: 9,
        },
      }),
    )
    expect(json.usage).toEqual({
      inputTokens: 5,
      cacheWrite5mTokens: 200,
      cacheWrite1hTokens: 100,
      cacheReadTokens: 700,
      outputTokens: 9,
    })
    expect(json.promptTokens).toBe(1_005)
    const sse =
      'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":5,"cache_creation_input_tokens":10,"cache_read_input_tokens":20,"output_tokens":1}}}\n\nevent: message_delta\ndata: {"type":"message_delta","usage":{"input_tokens":null,"output_tokens":42}}\n\n'
    expect(readAnthropicAnswer(2, 200, 'text/event-stream', sse).usage).toEqual({
      inputTokens: 5,
      cacheWrite5mTokens: 10,
      cacheWrite1hTokens: 0,
      cacheReadTokens: 20,
      outputTokens: 42,
    })
    const refused = readAnthropicAnswer(
      3,
      400,
      'application/json',
      '{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 70123 tokens > 64000 maximum"}}',
    )
    expect(refused).toMatchObject({ refusedForLength: true, promptTokens: 70_123 })
  })
})

describe('withinFloor', () => {
  const outcome = (index: number, ctxgateEstimate?: number) => ({
    index,
    status: 200,
    refusedForLength: false,
    promptTokens: 1_000,
    usage: { inputTokens: 0, cacheWrite5mTokens: 100, cacheWrite1hTokens: 0, cacheReadTokens: 1_000, outputTokens: 0 },
    ...(ctxgateEstimate === undefined ? {} : { ctxgateEstimate }),
  })
  const floor = { startTokens: 100_000, shortSessionRequests: 3 }

  it('adds up the requests before the first one the floor lets the economy edit', () => {
    const run = [outcome(0, 120_000), outcome(1, 90_000), outcome(2, 99_999), outcome(3, 100_000), outcome(4, 50_000)]
    // The first two are a short session whatever their size; the fourth reaches the start point, and everything after it may follow its edit.
    expect(withinFloor(run, floor)).toEqual({ requestsWithin: 3, billedWithin: 3 * (125 + 100) })
  })

  it('stops at a request ctxgate did not estimate, to stay a lower bound', () => {
    expect(withinFloor([outcome(0, 1), outcome(1, 1), outcome(2)], floor).requestsWithin).toBe(2)
  })
})
