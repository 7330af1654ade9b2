import { describe, expect, it } from 'vitest'
import { defaultMultipliers } from '../../src/billing/prices.ts'
import { defaultEconomyPolicy, type EconomyPolicy } from '../../src/rewrite/economy/types.ts'
import { promiseWritten } from '../../src/rewrite/marker-promise.ts'
import type { ConversationMemory, PipelineInput } from '../../src/rewrite/pipeline.ts'
import type { ChatView } from '../../src/rewrite/types.ts'
import {
  runRewritten,
  viewOf,
  viewRound,
  viewTokens,
  viewWithCalls,
  type NamedCall,
  type ViewStep,
} from '../helpers/chat-view.ts'

const minute = 60_000
const policy: EconomyPolicy = { ...defaultEconomyPolicy, startTokens: 20_000 }

const rounds = (count: number, tokens: number): ViewStep[] =>
  Array.from({ length: count }, (_, index) => viewRound(tokens, `r${index}`))

/** A session that has sent `requests` requests, 30 s apart, growing 2,500 tokens each. */
const session = (requests: number, overrides: Partial<ConversationMemory> = {}): ConversationMemory => ({
  decisions: { results: {} },
  // The previous request kept its cache marker ahead of the oldest result.
  nextEditResult: 'r0',
  requests,
  lastSeen: 0,
  messageCount: 1,
  economy: { growth: Array.from({ length: 16 }, () => 2_500), gapsMs: Array.from({ length: 16 }, () => 30_000) },
  ...overrides,
})

function run(view: ChatView, memory: ConversationMemory | undefined, overrides: Partial<PipelineInput> = {}) {
  return runRewritten(view, memory, {
    limits: { window: 200_000, budget: 180_000 },
    economy: { prices: defaultMultipliers, policy },
    now: 30_000,
    ...overrides,
  })
}

// 100 head + 20 task + 40 rounds of (15 + 4 + 3 + 2,400): 97,000 tokens, well under the 180k budget.
const long = viewOf(rounds(40, 2_400))

describe('the cache-priced economy through the pipeline', () => {
  it('clears every old result below budget when the batch pays for its cache rewrite, and freezes it', () => {
    expect(viewTokens(long)).toBe(97_000)
    const outcome = run(long, session(40))
    expect(outcome.batch).toMatchObject({ reason: 'pays_back' })
    expect(outcome.batch?.predictedNetSaving).toBeGreaterThan(0.25 * (outcome.batch?.oneTimeCost ?? 0))
    expect(outcome.batch?.paybackRequests).toBeLessThanOrEqual(outcome.batch?.horizon ?? 0)
    // The marker of this request reads where the batch starts; the next one goes where the batch after it will.
    expect(outcome.nextEditResult).toBe('r0')
    expect(outcome.followingEditResult).toBe('r37')
    expect(outcome.next.nextEditResult).toBe('r37')
    // Rounds 0–36 are cleared; the newest 3 stay whole.
    expect(outcome.report.cleared).toBe(37)
    const cleared = outcome.edits.flatMap((edit) => (edit.kind === 'replace-tool-result' ? [edit.id] : []))
    expect(cleared).not.toContain('r37')
    expect(cleared).not.toContain('r39')
    expect(Object.keys(outcome.next.decisions.results)).toHaveLength(37)
    expect(outcome.noteOn).toBe(true)
    // The next request re-applies the batch as frozen: no new batch, the prefix holds.
    const grown = viewOf(rounds(41, 2_400))
    const next = run(grown, { ...outcome.next, requests: 41, lastSeen: 30_000 }, { now: 60_000 })
    expect(next.batch).toBeUndefined()
    expect(next.report).toMatchObject({ newBatch: false, cleared: 37 })
    expect(next.prefixBreak).toBeUndefined()
  })

  it('after a batch that starts at the kept marker, puts the next marker after its edit point, never on an older result', () => {
    // The previous request kept its marker ahead of r20: the batch may edit from there on, so r0–r19 stay whole.
    const outcome = run(long, session(40, { nextEditResult: 'r20' }))
    expect(outcome.batch).toMatchObject({ reason: 'pays_back' })
    const cleared = outcome.edits.flatMap((edit) => (edit.kind === 'replace-tool-result' ? [edit.id] : []))
    expect(cleared).toContain('r20')
    expect(cleared).not.toContain('r0')
    // A marker ahead of r0 would sit inside the prefix this request reads: under the strict cache-write
    // reading it writes nothing, so the next batch could read no further than the head.
    expect(outcome.followingEditResult).toBe('r37')
    expect(outcome.next.nextEditResult).toBe('r37')
  })

  it('keeps the next marker ahead of a read the batch left whole, so a later batch can clear it once it is superseded', () => {
    // Round 30 reads a file (young, so the batch keeps it); the previous request kept its marker ahead of it.
    const reading = (view: ChatView, reads: readonly number[]): ChatView => ({
      ...view,
      messages: view.messages.map((message) => {
        const round = reads.find((index) => message.toolCallIds.includes(`r${index}`))
        return round === undefined
          ? message
          : { ...message, toolCallNames: ['Read'], toolCallInputs: [{ file_path: 'src/app.ts' }] }
      }),
    })
    // Rounds 31–36 are large, so clearing 31–36 pays on its own.
    const grown = (count: number): ChatView =>
      viewOf(
        Array.from({ length: count }, (_, index) => viewRound(index > 30 && index < 37 ? 8_000 : 2_400, `r${index}`)),
      )
    const first = run(reading(grown(40), [30]), session(40, { nextEditResult: 'r30' }))
    const cleared = first.edits.flatMap((edit) => (edit.kind === 'replace-tool-result' ? [edit.id] : []))
    expect(cleared).toContain('r31')
    expect(cleared).not.toContain('r30')
    // This request writes everything from its marker on fresh, the read too: the next marker may stay ahead of it.
    expect(first.next.nextEditResult).toBe('r30')
    // At round 45 the agent reads the file again: the old read is superseded, and the next batch takes it.
    let memory: ConversationMemory = { ...first.next, requests: 40, lastSeen: 40 * 30_000 }
    let outcome = first
    for (let count = 41; count <= 60 && !(outcome !== first && outcome.batch?.reason === 'pays_back'); count++) {
      outcome = run(reading(grown(count), [30, 45]), memory, { now: count * 30_000 })
      memory = { ...outcome.next, requests: count, lastSeen: count * 30_000 }
    }
    expect(outcome.batch).toMatchObject({ reason: 'pays_back' })
    expect(Object.keys(memory.decisions?.results ?? {})).toContain('r30')
  })

  it('keeps a promise the adapter bridged to a result the batch cleared: the next request marks it again, unblocked', () => {
    const first = run(long, session(40))
    expect(first.next.decisions.results).toHaveProperty('r5')
    // With one free slot the adapter wrote the next batch's entry ahead of r5, within lookback of the entry it read.
    const bridged = promiseWritten(first.next, 'r5')
    expect(bridged).toMatchObject({ nextEditResult: 'r5', nextEditCleared: true })
    const grown = viewOf(rounds(41, 2_400))
    const next = run(grown, { ...bridged, requests: 41, lastSeen: 30_000 }, { now: 60_000 })
    expect(next.nextEditResult).toBe('r5')
    expect(next.waited).not.toBe('marker_moving')
    expect(next.next).toMatchObject({ nextEditResult: 'r5', nextEditCleared: true })
    // The same promise without the flag reads as spent (its result edited since): the economy waits for a new marker.
    const spent = run(grown, { ...first.next, nextEditResult: 'r5', requests: 41, lastSeen: 30_000 }, { now: 60_000 })
    expect(spent.nextEditResult).not.toBe('r5')
    expect(spent.waited).toBe('marker_moving')
    // A promise the adapter wrote as asked stays as the plan had it.
    expect(promiseWritten(first.next, undefined)).toBe(first.next)
    expect(promiseWritten(first.next, 'r37')).toBe(first.next)
  })

  it('keeps no promise no marker could be written for, so the next batch is priced as rewriting from the head', () => {
    // Every slot is the client's (opencode marks two system messages and its newest two): the batch's marker
    // ahead of r37 was never written.
    const first = run(long, session(40))
    const unbacked = promiseWritten(first.next, null)
    expect(unbacked.nextEditResult).toBeUndefined()
    // Priced from the head, the same batch costs more than when it reads up to a marker.
    const grown = viewOf(rounds(48, 2_400))
    const memory = (next: typeof first.next) => ({ ...next, requests: 47, lastSeen: 30_000 })
    const fromHead = run(grown, memory(unbacked), { now: 60_000 })
    const fromMarker = run(grown, memory(first.next), { now: 60_000 })
    expect(fromMarker.batch?.oneTimeCost ?? 0).toBeGreaterThan(0)
    expect(fromHead.batch?.oneTimeCost ?? Number.POSITIVE_INFINITY).toBeGreaterThan(fromMarker.batch?.oneTimeCost ?? 0)
  })

  it('before any batch, keeps the marker ahead of a result kept whole today that a batch may take within the payback horizon', () => {
    // Round 0 reads a file: needed again too often while young to be cleared below budget (clear-order.ts).
    const readFirst = (count: number): ChatView => {
      const view = viewOf(rounds(count, 2_400))
      return {
        ...view,
        messages: view.messages.map((message) =>
          message.toolCallIds.includes('r0')
            ? { ...message, toolCallNames: ['Read'], toolCallInputs: [{ file_path: 'src/app.ts' }] }
            : message,
        ),
      }
    }
    const { nextEditResult: _kept, ...unmarked } = session(3)
    // 9 rounds old, it is old within 16 more: a marker past it would leave it whole for good.
    expect(run(readFirst(10), unmarked).next.nextEditResult).toBe('r0')
    // 3 rounds old, it is still needed too often 16 rounds on: the marker goes past it, as before.
    expect(run(readFirst(4), unmarked).next.nextEditResult).toBe('r1')
  })

  it('makes a first batch without the system note when adding it at the head would not pay, and keeps it out after', () => {
    // A 60k head: switching the note on would rewrite it too (1.15 × 60k), more than the 6 requests a session at
    // request 15 is sure of (the prior's 30% quantile) pay back.
    const heavy = viewOf(rounds(40, 2_400), { headTokens: 60_000 })
    const outcome = run(heavy, session(15))
    expect(outcome.batch).toMatchObject({ reason: 'pays_back' })
    // Rewriting from the head would cost at least (1.25 − 0.1) × 60k; the batch leaves the head alone and also
    // prices the results the agent may fetch again (clear-order.ts), so its cost stays far below that.
    expect(outcome.batch?.oneTimeCost).toBeLessThan(0.5 * 60_000)
    expect(outcome.noteOn).toBe(false)
    expect(outcome.next.noteDeferred).toBe(true)
    // The next request re-applies the batch and still leaves the head as it was: no prefix break.
    const next = run(
      viewOf(rounds(41, 2_400), { headTokens: 60_000 }),
      { ...outcome.next, requests: 41, lastSeen: 30_000 },
      {
        now: 60_000,
      },
    )
    expect(next).toMatchObject({ noteOn: false, prefixBreak: undefined })
    expect(next.next.noteDeferred).toBe(true)
    // Once the cache has gone cold anyway, the note joins the head at no extra cost.
    const cold = run(
      viewOf(rounds(42, 2_400), { headTokens: 60_000 }),
      { ...next.next, requests: 42, lastSeen: 60_000 },
      {
        now: 60_000 + 6 * minute,
      },
    )
    expect(cold.noteOn).toBe(true)
  })

  it('leaves a short session alone below budget, however large', () => {
    const outcome = run(long, session(3))
    expect(outcome).toMatchObject({ batch: undefined, waited: 'short_session' })
    expect(outcome.edits).toHaveLength(0)
  })

  it('does not edit below the start point', () => {
    const outcome = run(viewOf(rounds(7, 2_400)), session(40))
    expect(outcome).toMatchObject({ batch: undefined, waited: 'under_start' })
  })

  it('keeps the newest run of each test whole below budget while it is young, and clears it once old (point A)', () => {
    // 40 rounds of shell output; round 5 runs b.test.ts (34 rounds old), round 30 runs a.test.ts (9 rounds old).
    const calls: NamedCall[] = Array.from({ length: 40 }, (_, index): NamedCall => {
      const command = index === 5 ? 'npx jest b.test.ts' : index === 30 ? 'npx jest a.test.ts' : `ls dir${index}`
      return [`r${index}`, 'bash', { command }, `output ${index}`]
    })
    const outcome = run(viewWithCalls(calls, 2_400), session(40))
    expect(outcome.batch).toMatchObject({ reason: 'pays_back' })
    const cleared = outcome.edits.flatMap((edit) => (edit.kind === 'replace-tool-result' ? [edit.id] : []))
    expect(cleared).toContain('r5')
    expect(cleared).toContain('r29')
    expect(cleared).toContain('r31')
    expect(cleared).not.toContain('r30')
  })

  it("judges the start point on the upstream's count, not on the budget's upper bound of it", () => {
    // 97,000 estimated tokens; the budget's factor (with its margin) puts them past a 100k start point,
    // the conversation's own ratio (what the upstream counted) does not: no batch until it really is.
    const atStart = { economy: { prices: defaultMultipliers, policy: { ...policy, startTokens: 100_000 } } }
    const counted = run(long, session(40), { ...atStart, factor: 1.06, countFactor: 1.02 })
    expect(counted).toMatchObject({ batch: undefined, waited: 'under_start' })
    expect(counted.edits).toHaveLength(0)
    // Without a count (before the conversation's first answer) the factor sizes it, as before.
    expect(run(long, session(40), { ...atStart, factor: 1.06 }).batch).toMatchObject({ reason: 'pays_back' })
    // Past the start point by the count, the batch comes.
    expect(run(long, session(40), { ...atStart, factor: 1.06, countFactor: 1.04 }).batch).toMatchObject({
      reason: 'pays_back',
    })
  })

  it('waits when too few requests are ahead for the batch to pay back', () => {
    // Priced over this request alone: 87,320 tokens × 0.1 saved once is less than the rewrite (≈ 11,100).
    const tight = run(long, session(40), {
      economy: { prices: defaultMultipliers, policy: { ...policy, horizonCap: 0 } },
    })
    expect(tight).toMatchObject({ batch: undefined, waited: 'no_payback_in_time' })
  })

  it('applies the batch for free when the cache has expired since the previous request', () => {
    const previous = run(viewOf(rounds(39, 2_400)), undefined, { economy: undefined }).next
    const outcome = run(long, { ...session(40), ...previous, requests: 40, lastSeen: 0 }, { now: 6 * minute })
    expect(outcome.batch).toMatchObject({ reason: 'cold_cache', oneTimeCost: 0 })
    // The miss is the TTL's, not the batch's: the whole prefix had to be written again anyway.
    expect(outcome.prefixBreak).toBe('ttl_expired')
  })

  it('judges the messages cold after 5 minutes even when the head was written with a 1-hour TTL', () => {
    const previous = run(viewOf(rounds(39, 2_400)), undefined, { economy: undefined }).next
    const memory = { ...session(40), ...previous, requests: 40, lastSeen: 0 }
    const withHourHead = { ...memory, economy: { ...session(40).economy, cacheTtl: '1h' as const } }
    const outcome = run(long, withHourHead, { now: 6 * minute })
    expect(outcome.batch).toMatchObject({ reason: 'cold_cache', oneTimeCost: 0 })
    expect(outcome.prefixBreak).toBe('ttl_expired')
  })

  it('leaves over-budget requests to the configured plan, counted as over_budget', () => {
    const outcome = run(long, session(40), { limits: { window: 200_000, budget: 90_000 } })
    expect(outcome.batch).toEqual({ reason: 'over_budget' })
    expect(outcome.report.estimatedAfter).toBeLessThanOrEqual(90_000 * 0.6)
  })

  it('never edits a conversation whose context the provider manages', () => {
    const outcome = run({ ...long, serverManaged: true }, session(40), {
      limits: { window: 200_000, budget: Number.POSITIVE_INFINITY },
    })
    expect(outcome).toMatchObject({ batch: undefined, waited: undefined })
    expect(outcome.edits).toHaveLength(0)
  })

  it('edits nothing below budget under budget-only', () => {
    const outcome = run(long, session(40), { economy: undefined })
    expect(outcome).toMatchObject({ batch: undefined, waited: undefined })
    expect(outcome.edits).toHaveLength(0)
  })

  it('never clears the results of excluded tools below budget', () => {
    const named: ChatView = {
      ...long,
      messages: long.messages.map((message) => ({
        ...message,
        toolCallNames: message.toolCallIds.map((id) => (Number(id.slice(1)) % 2 === 0 ? 'memory' : 'bash')),
      })),
    }
    // The marker was kept ahead of the oldest result a batch may clear: r0 is the excluded tool's.
    // Half the results stay, so the batch pays back only over a longer horizon: priced at the median forecast.
    const outcome = run(named, session(40, { nextEditResult: 'r1' }), {
      economy: {
        prices: defaultMultipliers,
        policy: { ...policy, excludeTools: ['memory'], forecastQuantile: 0.5 },
      },
    })
    expect(outcome.batch?.reason).toBe('pays_back')
    const cleared = outcome.edits.flatMap((edit) => (edit.kind === 'replace-tool-result' ? [edit.id] : []))
    expect(cleared.length).toBeGreaterThan(0)
    for (const id of cleared) expect(Number(id.slice(1)) % 2).toBe(1)
  })

  it('puts a one-hour TTL on the stable head when the session pauses past five minutes', () => {
    const pausing = session(40, {
      economy: {
        growth: [100],
        gapsMs: Array.from({ length: 16 }, (_, index) => (index % 2 === 0 ? 20 : 0.5) * minute),
      },
    })
    expect(run(viewOf(rounds(3, 500)), pausing).stableTtl).toBe('1h')
    expect(run(viewOf(rounds(3, 500)), session(40)).stableTtl).toBe('5m')
    expect(run(viewOf(rounds(3, 500)), pausing, { economy: undefined }).stableTtl).toBe('5m')
  })

  it('remembers growth and gaps, bounded, and reads a state stored before the economy as empty', () => {
    const old = { decisions: { results: {} }, requests: 5, lastSeen: 10_000, messageCount: 1 }
    let outcome = run(viewOf(rounds(2, 500)), old, { now: 40_000 })
    expect(outcome.next.economy).toMatchObject({ growth: [], gapsMs: [30_000], cacheTtl: '5m' })
    let memory: ConversationMemory = { ...outcome.next, requests: 6, lastSeen: 40_000 }
    for (let step = 3; step < 25; step++) {
      outcome = run(viewOf(rounds(step, 500)), memory, { now: memory.lastSeen! + 1_000 })
      memory = { ...outcome.next, requests: step + 4, lastSeen: memory.lastSeen! + 1_000 }
    }
    expect(memory.economy?.growth).toHaveLength(16)
    expect(new Set(memory.economy?.growth)).toEqual(new Set([522]))
    expect(memory.economy?.gapsMs).toHaveLength(16)
    const garbled = { ...memory, economy: { growth: 'x', gapsMs: [null, 5], unedited: 'y' } } as never
    // Malformed entries are dropped; a clock behind the stored one (another replica's) adds no gap.
    expect(run(viewOf(rounds(3, 500)), garbled).next.economy).toMatchObject({ growth: [], gapsMs: [5] })
  })

  it('tells a model change from the other causes of a cache miss', () => {
    const first = run(viewOf(rounds(2, 500)), undefined)
    const memory = { ...first.next, requests: 1, lastSeen: 0 }
    expect(run({ ...viewOf(rounds(3, 500)), model: 'other-model' }, memory).prefixBreak).toBe('model_changed')
    expect(run(viewOf(rounds(3, 500)), memory).prefixBreak).toBeUndefined()
  })
})
