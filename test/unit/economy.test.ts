import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.ts'
import { chooseStableTtl, isCold } from '../../src/rewrite/economy/cache-timing.ts'
import { estimateCadence, expectedRemaining, type Cadence } from '../../src/rewrite/economy/cadence.ts'
import { belowFloor, decideBatch } from '../../src/rewrite/economy/decide.ts'
import { pricePath } from '../../src/rewrite/economy/path-cost.ts'
import { defaultMultipliers, billedDollars, billedInputTokens, pricesFor } from '../../src/billing/prices.ts'
import { defaultEconomyPolicy, type ConversationCost, type MessageCost } from '../../src/rewrite/economy/types.ts'
import { foldSummary } from '../../src/rewrite/notes.ts'

const usage = { inputTokens: 10_000, cacheWrite5mTokens: 20_000, cacheWrite1hTokens: 0, cacheReadTokens: 100_000 }

describe('price model', () => {
  it('bills a usage in input-token equivalents and in dollars (Sonnet 4.x, $3 in / $15 out)', () => {
    const sonnet = pricesFor(loadConfig().economy.prices, 'claude-sonnet-4-5-20250929')
    // 10,000 + 1.25 × 20,000 + 0.1 × 100,000 = 45,000 input-equivalent tokens.
    expect(billedInputTokens({ ...usage, outputTokens: 1_000 }, sonnet)).toBe(45_000)
    // 45,000 × $3 + 1,000 × $15, per million.
    expect(billedDollars({ ...usage, outputTokens: 1_000 }, sonnet)).toBeCloseTo(0.135 + 0.015, 10)
  })

  it('prices a 1-hour write at 2× and knows no dollars for an unpriced family', () => {
    const opus5 = pricesFor(loadConfig().economy.prices, 'claude-opus-5')
    const oneHour = {
      inputTokens: 0,
      cacheWrite5mTokens: 0,
      cacheWrite1hTokens: 1_000,
      cacheReadTokens: 0,
      outputTokens: 0,
    }
    expect(billedInputTokens(oneHour, opus5)).toBe(2_000)
    expect(billedDollars(oneHour, opus5)).toBeNull()
  })

  it('bills OpenAI writes at the input price before GPT-5.6 and at 1.25× from it', () => {
    const prices = loadConfig().economy.prices
    const written = {
      inputTokens: 0,
      cacheWrite5mTokens: 1_000,
      cacheWrite1hTokens: 0,
      cacheReadTokens: 0,
      outputTokens: 0,
    }
    expect(billedInputTokens(written, pricesFor(prices, 'gpt-5.2'))).toBe(1_000)
    expect(billedInputTokens(written, pricesFor(prices, 'gpt-5.6-mini'))).toBe(1_250)
  })
})

describe('cadence', () => {
  it('expects as many more requests as the session has sent when nothing else is known', () => {
    expect(expectedRemaining(12, [])).toBe(12)
  })

  it('takes what finished sessions of the same kind did once there are enough of them', () => {
    // Five finished sessions outlasted 10 requests, by 5, 10, 15, 20 and 30: 16 more on average.
    expect(expectedRemaining(10, [3, 15, 20, 25, 30, 40])).toBe(16)
    // Two of them: blended 2/5 with the session's own 10.
    expect(expectedRemaining(10, [20, 30])).toBeCloseTo(0.4 * 15 + 0.6 * 10, 10)
  })

  it('reads growth as the median increase and pauses as shares over 5 minutes and an hour', () => {
    const cadence = estimateCadence({
      requestsSoFar: 5,
      growth: [1_000, -40_000, 3_000, 2_000],
      gapsMs: [10_000, 400_000, 4_000_000, 20_000],
      finishedLengths: [],
    })
    expect(cadence).toEqual({
      requestsSoFar: 5,
      expectedRemaining: 5,
      // The 30% quantile of the scale-free prior: 5 × 0.3 / 0.7.
      conservativeRemaining: (5 * 0.3) / 0.7,
      // The prior's mean of min(remaining, 16): 5 × ln(1 + 16 / 5).
      averageRemainingWithinCap: 5 * Math.log1p(16 / 5),
      growthPerRequest: 2_000,
      pausesOver5m: 0.5,
      pausesOver1h: 0.25,
    })
  })
})

/** A conversation of `rounds` tool rounds: a task, then per round an assistant call and a result of `resultTokens`. */
function conversation(rounds: number, resultTokens: number, extra: Partial<ConversationCost> = {}): ConversationCost {
  const messages: MessageCost[] = [{ tokens: 500, results: [] }]
  for (let round = 0; round < rounds; round++) {
    messages.push({ tokens: 100, results: [] })
    messages.push({
      tokens: resultTokens + 10,
      results: [
        { id: `r${round}`, message: messages.length, tokens: resultTokens, replacementTokens: 40, tool: 'bash', round },
      ],
    })
  }
  const clientTokens = messages.reduce((sum, message) => sum + message.tokens, 12_000)
  return {
    headTokens: 12_000,
    messages,
    clientTokens,
    rounds,
    budget: 176_000,
    cacheTtl: '5m',
    msSinceLastRequest: 30_000,
    ...extra,
  }
}

const steady: Cadence = {
  requestsSoFar: 40,
  expectedRemaining: 40,
  conservativeRemaining: 40,
  averageRemainingWithinCap: 16,
  growthPerRequest: 2_500,
  pausesOver5m: 0,
  pausesOver1h: 0,
}

describe('break-even decision', () => {
  const policy = { ...defaultEconomyPolicy, startTokens: 50_000 }

  it('leaves a conversation under the start point alone', () => {
    const decision = decideBatch({
      conversation: conversation(10, 2_000),
      cadence: steady,
      prices: defaultMultipliers,
      policy,
    })
    expect(decision).toEqual({ kind: 'none', reason: 'under_start' })
  })

  it('measures the start point on the conversation as the client sent it, not on what earlier batches left', () => {
    // 112,900 tokens are sent; earlier batches took 87,100 more out of what the client sent (200,000).
    const decide = (clientTokens: number) =>
      decideBatch({
        conversation: conversation(40, 2_400, { clientTokens }),
        cadence: steady,
        prices: defaultMultipliers,
        policy: { ...policy, startTokens: 150_000 },
      })
    expect(decide(112_900)).toEqual({ kind: 'none', reason: 'under_start' })
    expect(decide(200_000)).toMatchObject({ kind: 'batch', reason: 'pays_back' })
  })

  it('never edits a short session below budget', () => {
    const decision = decideBatch({
      conversation: conversation(40, 2_400),
      cadence: { ...steady, requestsSoFar: 5 },
      prices: defaultMultipliers,
      policy,
    })
    expect(decision).toEqual({ kind: 'none', reason: 'short_session' })
  })

  it('clears every old result but the newest 3 rounds when the path pays (worked example)', () => {
    // 12,000 head + 500 task + 40 rounds × 2,510 = 112,900 tokens; 37 results × 2,360 = 87,320 removable.
    const decision = decideBatch({
      conversation: conversation(40, 2_400),
      cadence: steady,
      prices: defaultMultipliers,
      policy,
    })
    expect(decision).toMatchObject({ kind: 'batch', reason: 'pays_back', editPoint: 2, tokensRemoved: 87_320 })
    if (decision.kind !== 'batch') return
    expect(decision.ids).toHaveLength(37)
    expect(decision.ids).not.toContain('r37')
    // Rewriting the 25,580 tokens after the edit point at 1.25 instead of 0.1.
    expect(decision.oneTimeCost).toBeCloseTo(1.15 * (112_900 - 87_320 - 12_600), 6)
    // 87,320 × 0.1 saved on each later request: paid back in 3.4 of the 40 ahead.
    expect(decision.savingPerRequest).toBeCloseTo(8_732, 6)
    expect(decision.paybackRequests).toBeCloseTo(decision.oneTimeCost / 8_732, 6)
    expect(decision).toMatchObject({ horizon: 40 })
    expect(decision.predictedNetSaving).toBeCloseTo(40 * 8_732 - decision.oneTimeCost, 6)
  })

  it('prices a first batch that also switches the system note on from the head, not from its edit point', () => {
    const priced = (batchRewritesHead: boolean) =>
      decideBatch({
        conversation: conversation(40, 2_400, { batchRewritesHead }),
        cadence: steady,
        prices: defaultMultipliers,
        policy,
      })
    const later = priced(false)
    const first = priced(true)
    if (later.kind !== 'batch' || first.kind !== 'batch') throw new Error('expected batches')
    // The 12,600 tokens of head and task before the edit point are rewritten too.
    expect(first.oneTimeCost - later.oneTimeCost).toBeCloseTo(1.15 * 12_600, 6)
  })

  it('waits when the session may end before the rewrite pays back', () => {
    const decision = decideBatch({
      conversation: conversation(40, 2_400),
      cadence: { ...steady, conservativeRemaining: 1 },
      prices: defaultMultipliers,
      policy,
    })
    expect(decision).toEqual({ kind: 'none', reason: 'no_payback_in_time' })
  })

  it('waits when the payback lies beyond the requests the cadence was measured over, however long the forecast', () => {
    const decide = (maxPaybackRequests: number) =>
      decideBatch({
        conversation: conversation(40, 2_400),
        cadence: steady,
        prices: defaultMultipliers,
        policy: { ...policy, maxPaybackRequests },
      })
    const made = decide(40)
    if (made.kind !== 'batch') throw new Error('expected a batch')
    expect(decide(Math.ceil(made.paybackRequests))).toMatchObject({ kind: 'batch' })
    expect(decide(Math.floor(made.paybackRequests))).toEqual({ kind: 'none', reason: 'no_payback_in_time' })
  })

  it('makes a batch that pays back within the conservative forecast only if it clearly pays on average', () => {
    const decide = (averageRemainingWithinCap: number) =>
      decideBatch({
        conversation: conversation(40, 2_400),
        cadence: { ...steady, averageRemainingWithinCap },
        prices: defaultMultipliers,
        policy,
      })
    const made = decide(16)
    if (made.kind !== 'batch') throw new Error('expected a batch')
    // The margin asks the average saving to repay the rewrite and a quarter more; the payback alone is not enough.
    const clearly = (1 + policy.margin) * made.paybackRequests
    expect(decide(clearly * 1.01)).toMatchObject({ kind: 'batch' })
    expect(decide(clearly * 0.99)).toEqual({ kind: 'none', reason: 'waiting_pays_more' })
  })

  it('reads no further than the marker the previous request kept, and prices from the head when none is known', () => {
    const priced = (markerAt: number | undefined) => {
      const decision = decideBatch({
        conversation: conversation(40, 2_400, markerAt === undefined ? {} : { markerAt }),
        cadence: steady,
        prices: defaultMultipliers,
        policy,
      })
      if (decision.kind !== 'batch') throw new Error('expected a batch')
      return decision.oneTimeCost
    }
    // No marker known past the head: the task and the first call before the edit point are written again too.
    expect(priced(0) - priced(undefined)).toBeCloseTo(1.15 * 600, 6)
    expect(priced(2)).toBeCloseTo(priced(undefined), 6)
  })

  it('batches on a cold cache, where the rewrite is free', () => {
    const decision = decideBatch({
      conversation: conversation(40, 2_400, { msSinceLastRequest: 6 * 60_000 }),
      cadence: { ...steady, conservativeRemaining: 1 },
      prices: defaultMultipliers,
      policy,
    })
    expect(decision).toMatchObject({ kind: 'batch', reason: 'cold_cache', oneTimeCost: 0, paybackRequests: 0 })
  })

  it('prices the re-fetches a batch may cause into its payback, not into its timing', () => {
    // Every old result is a command the agent ran again later (superseded), each 8 rounds old or more.
    const base = conversation(40, 2_400)
    const risky: ConversationCost = {
      ...base,
      messages: base.messages.map((message) => ({
        ...message,
        results: message.results.map((result) => ({
          ...result,
          hazard: 0.0099,
          riskAge: { risk: 'superseded' as const, age: 39 - result.round },
        })),
      })),
    }
    const decide = (conversationCost: ConversationCost, remaining: number) =>
      decideBatch({
        conversation: conversationCost,
        cadence: { ...steady, conservativeRemaining: remaining, expectedRemaining: remaining },
        prices: defaultMultipliers,
        policy,
      })
    const plain = decide(base, 150)
    const priced = decide(risky, 150)
    if (plain.kind !== 'batch' || priced.kind !== 'batch') throw new Error('expected batches')
    // The rewrite is the same; the expected re-fetches lengthen the payback and shrink the net saving.
    expect(priced.oneTimeCost).toBeCloseTo(plain.oneTimeCost, 6)
    expect(priced.paybackRequests).toBeGreaterThan(plain.paybackRequests)
    expect(priced.predictedNetSaving).toBeLessThan(plain.predictedNetSaving)
    // A long horizon raises the chance of a re-fetch, but waiting would clear the same results: still a batch now.
    expect(priced.reason).toBe('pays_back')
    // The longer the session is expected to run, the likelier a re-fetch: the payback grows with the horizon.
    const short = [decide(base, 10), decide(risky, 10)]
    if (short[0]?.kind !== 'batch' || short[1]?.kind !== 'batch') throw new Error('expected batches')
    expect(short[1].paybackRequests - short[0].paybackRequests).toBeGreaterThan(0)
    expect(short[1].paybackRequests - short[0].paybackRequests).toBeLessThan(
      priced.paybackRequests - plain.paybackRequests,
    )
  })

  it('never touches excluded tools, and leaves what is over budget to the planner', () => {
    const decision = decideBatch({
      conversation: conversation(40, 2_400),
      cadence: steady,
      prices: defaultMultipliers,
      policy: { ...policy, excludeTools: ['bash'] },
    })
    expect(decision).toEqual({ kind: 'none', reason: 'nothing_eligible' })
    // Over budget the economy has no branch of its own: the pipeline does not ask it (the planner cuts
    // to fit), and asked anyway it prices the batch like any other.
    const over = decideBatch({
      conversation: conversation(40, 2_400, { budget: 100_000 }),
      cadence: steady,
      prices: defaultMultipliers,
      policy,
    })
    expect(over).toMatchObject({ kind: 'batch', reason: 'pays_back' })
  })

  it('checks the floor in one place: short sessions and small conversations first', () => {
    expect(belowFloor(5, 200_000, policy)).toEqual({ kind: 'none', reason: 'short_session' })
    expect(belowFloor(40, 49_999, policy)).toEqual({ kind: 'none', reason: 'under_start' })
    expect(belowFloor(40, 50_000, policy)).toBeUndefined()
  })
})

describe('path pricing', () => {
  const base = {
    size: 100_000,
    sizeAfter: 30_000,
    keptPrefix: 12_500,
    protectedTail: 7_500,
    laterProtectedTail: 7_500,
    growthPerRequest: 2_500,
    clearableShare: 0.9,
    remaining: 30,
    budget: 176_000,
    read: 0.1,
    write: 1.25,
    coldNow: false,
    coldLater: 0,
  }

  it('prices never-editing as the plain sum of reads over the horizon', () => {
    // 31 requests from 100,000 growing by 2,500: 0.1 × (31 × 100,000 + 2,500 × 465).
    expect(pricePath(base).never).toBeCloseTo(0.1 * (31 * 100_000 + 2_500 * 465), 6)
  })

  it('finds batching now cheaper than waiting when the removable mass is already large', () => {
    const path = pricePath(base)
    expect(path.batchNow).toBeLessThan(path.wait)
    expect(path.oneTimeCost).toBeCloseTo(1.15 * 17_500, 6)
  })

  it('leans toward batching now when the rounds it must rewrite are lighter than later batches will find them', () => {
    const margin = (laterProtectedTail: number) => {
      const path = pricePath({ ...base, laterProtectedTail })
      return path.batchNow - path.wait
    }
    expect(margin(15_000)).toBeLessThan(margin(7_500))
    expect(margin(3_000)).toBeGreaterThan(margin(7_500))
  })

  it('prefers to wait when little is removable yet and many requests are ahead', () => {
    const path = pricePath({ ...base, size: 32_000, remaining: 100 })
    expect(path.wait).toBeLessThan(path.batchNow)
  })
})

describe('cache timing', () => {
  it('calls a cache cold once the gap exceeds the TTL it was written with', () => {
    expect(isCold(undefined, '5m')).toBe(false)
    expect(isCold(5 * 60_000, '5m')).toBe(false)
    expect(isCold(5 * 60_000 + 1, '5m')).toBe(true)
    expect(isCold(30 * 60_000, '1h')).toBe(false)
  })

  it('writes the stable part for an hour when pauses over 5 minutes are common (worked example)', () => {
    const cadence = { ...steady, expectedRemaining: 20, pausesOver5m: 0.3, pausesOver1h: 0 }
    // 5m: 20 × 0.3 × 1.15 × 20,000 = 138,000; 1h: (2 − 1.25) × 20,000 = 15,000 once.
    expect(chooseStableTtl({ clientSetTtl: false, stableTokens: 20_000, cadence, prices: defaultMultipliers })).toEqual(
      {
        ttl: '1h',
        expected5m: 138_000,
        expected1h: 15_000,
      },
    )
    expect(
      chooseStableTtl({
        clientSetTtl: false,
        stableTokens: 20_000,
        cadence: { ...cadence, pausesOver5m: 0.01, expectedRemaining: 2 },
        prices: defaultMultipliers,
      })?.ttl,
    ).toBe('5m')
  })

  it('leaves the TTL to a client that set one, and to sessions that never pause', () => {
    expect(
      chooseStableTtl({
        clientSetTtl: true,
        stableTokens: 1,
        cadence: { ...steady, pausesOver5m: 1 },
        prices: defaultMultipliers,
      }),
    ).toBeUndefined()
    expect(
      chooseStableTtl({ clientSetTtl: false, stableTokens: 1, cadence: steady, prices: defaultMultipliers }),
    ).toBeUndefined()
  })
})

describe('fold summary of wrapped command output', () => {
  it('keeps the exit code and the first lines of the real output, not the wrapper', () => {
    const output = [
      '',
      'FAILED tests/test_api.py::test_login - AssertionError',
      '====',
      'E   assert 401 == 200',
      'E   +  where 401 = status',
      'more',
    ].join('\n')
    const text = `Chunk ID: 4f1a\nWall time: 2.3 seconds\nProcess exited with code 1\nOriginal token count: 5120\nOutput:\n${output}`
    const summary = foldSummary(text)
    expect(summary).toContain('exit code 1')
    expect(summary).toContain(
      '"FAILED tests/test_api.py::test_login - AssertionError" / "E   assert 401 == 200" / "E   +  where 401 = status"',
    )
    expect(summary).not.toContain('Chunk ID')
  })

  it('says when the command printed nothing', () => {
    expect(
      foldSummary(
        'Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 0\nOriginal token count: 0\nOutput:\n',
      ),
    ).toContain('It printed nothing')
  })

  it('summarizes other outputs exactly as before, so earlier folds keep their bytes', () => {
    expect(foldSummary('error: exited with code 2\nline two')).toBe(
      '[ctxgate folded this tool output (34 characters, 2 lines, exit status 2). It began: "error: exited with code 2". Run the tool again if you need the full output.]',
    )
  })
})
