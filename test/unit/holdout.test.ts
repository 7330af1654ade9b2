import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { sessionCounterFields, type SessionCounters, type SessionTotals } from '../../src/session/accounting.ts'
import { armOf, firstUserMessage, HoldoutArms } from '../../src/session/holdout-arm.ts'
import { compareArms, medianInterval, minSessions, savingOf } from '../../src/session/holdout-compare.ts'

describe('the arm of a session', () => {
  it('is a function of kind and first user message: the same inputs, the same arm', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.double({ min: 0, max: 1, noNaN: true }), (kind, message, share) => {
        expect(armOf(kind, message, share)).toBe(armOf(kind, message, share))
      }),
    )
  })

  it('0 puts every session in the treated arm, 1 every session in control', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (kind, message) => {
        expect(armOf(kind, message, 0)).toBe('treated')
        expect(armOf(kind, message, 1)).toBe('control')
      }),
    )
  })

  it('a share of s puts s of the sessions in control, within binomial noise', () => {
    for (const share of [0.1, 0.5, 0.8]) {
      const count = 4_000
      let control = 0
      for (let index = 0; index < count; index++) if (armOf('shared/k', `task ${index}`, share) === 'control') control++
      const sd = Math.sqrt(count * share * (1 - share))
      expect(Math.abs(control - count * share)).toBeLessThanOrEqual(4 * sd)
    }
  })

  it('a larger share only moves sessions into control, never out of it', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (m, a, b) => {
          const [low, high] = a < b ? [a, b] : [b, a]
          if (armOf('k', m, low) === 'control') expect(armOf('k', m, high)).toBe('control')
        },
      ),
    )
  })

  it('the same first message in another kind of session is drawn again', () => {
    const arms = new Set(Array.from({ length: 64 }, (_, index) => armOf(`kind-${index}`, 'fix the bug', 0.5)))
    expect(arms).toEqual(new Set(['control', 'treated']))
  })
})

describe('the first user message', () => {
  it('ignores cache markers the client moves from request to request', () => {
    const text = { type: 'text', text: 'Fix the failing test' }
    const marked = { messages: [{ role: 'user', content: [{ ...text, cache_control: { type: 'ephemeral' } }] }] }
    const unmarked = {
      messages: [
        { role: 'user', content: [text] },
        { role: 'assistant', content: 'ok' },
      ],
    }
    expect(firstUserMessage(marked)).toBe(firstUserMessage(unmarked))
  })

  it('reads Responses input as a string or as items, skipping system and developer messages', () => {
    expect(firstUserMessage({ input: 'hello' })).toBe('hello')
    expect(
      firstUserMessage({
        input: [
          { role: 'developer', content: 'rules' },
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hello' }] },
        ],
      }),
    ).toBe('hello')
  })
})

describe('a session keeps its arm', () => {
  it('when its first user message changes (the client compacted), and the compaction is seen', () => {
    const arms = new HoldoutArms(0.5)
    const first = arms.see('s1', () => ({ kind: 'k', firstUserMessage: 'original task' }), 150_000)
    let decided = 0
    for (let index = 0; index < 20; index++) {
      const later = arms.see(
        's1',
        () => (decided++, { kind: 'k', firstUserMessage: `summary ${index}` }),
        20_000 + index,
      )
      expect(later.arm).toBe(first.arm)
    }
    expect(decided).toBe(0)
    expect(arms.see('s2', () => ({ kind: 'k', firstUserMessage: 'x' }), 100_000).clientCompacted).toBe(false)
    expect(arms.see('s2', () => ({ kind: 'k', firstUserMessage: 'y' }), 30_000).clientCompacted).toBe(true)
    expect(arms.see('s2', () => ({ kind: 'k', firstUserMessage: 'y' }), 35_000).clientCompacted).toBe(false)
  })
})

/** Every counter at zero, so a fixture names only what a test is about. */
const zeroCounters = Object.fromEntries(sessionCounterFields.map((field) => [field, 0])) as SessionCounters

function session(arm: 'control' | 'treated', billedTokens: number, extra: Partial<SessionTotals> = {}): SessionTotals {
  const { microDollars: _dollars, uneditedMicroDollars: _unedited, ...counters } = zeroCounters
  return {
    ...counters,
    sessionId: `${arm}-${billedTokens}`,
    turns: 10,
    promptTokens: billedTokens * 2,
    inputTokens: 0,
    cacheReadTokens: billedTokens,
    cacheWriteTokens: 0,
    outputTokens: 0,
    compactionPromptTokens: 0,
    compactionOutputTokens: 0,
    serverClearedToolUses: 0,
    serverClearedThinkingTurns: 0,
    serverClearedInputTokens: 0,
    tokensRemoved: 0,
    prefixBreaks: 0,
    refusalsAvoided: 0,
    billedTokens,
    uneditedBilledTokens: billedTokens,
    unpricedTurns: 0,
    lengthRefusals: 0,
    clientCompactions: 0,
    clientErrors: 0,
    unmeteredTurns: 0,
    dollars: billedTokens / 1e6,
    uneditedDollars: billedTokens / 1e6,
    models: ['claude-sonnet-4-5'],
    firstSeen: '2026-01-01T00:00:00.000Z',
    lastSeen: '2026-01-01T00:10:00.000Z',
    arm,
    kind: 'shared/k',
    ...extra,
  }
}

const later = Date.parse('2026-01-01T01:00:00.000Z')

describe('comparing the arms', () => {
  it('says "not enough sessions yet" until each arm has enough finished sessions for an interval', () => {
    const few = [
      ...[1, 2, 3, 4, 5].map((n) => session('control', n * 1000)),
      ...[1, 2, 3].map((n) => session('treated', n * 500)),
    ]
    const [kind] = compareArms(few, later, 60_000)
    expect(kind?.saving).toBeNull()
    expect(kind?.verdict).toMatch(/^not enough sessions yet \(5 control, 3 treated/)
    expect(kind?.control.billedInterval).toBeNull()
  })

  it('leaves out sessions still running and sessions with an unmetered answer', () => {
    const list = [
      session('control', 1000),
      session('control', 2000, { lastSeen: new Date(later - 1_000).toISOString() }),
      session('treated', 3000, { unmeteredTurns: 1 }),
    ]
    const [kind] = compareArms(list, later, 60_000)
    expect(kind?.control.sessions).toBe(1)
    expect(kind?.treated.sessions).toBe(0)
    expect(kind?.unmetered).toBe(1)
  })

  it('with enough sessions: medians, their intervals, and the saving with an interval around it', () => {
    const control = Array.from({ length: 12 }, (_, index) => session('control', 100_000 + index * 1_000))
    const treated = Array.from({ length: 12 }, (_, index) => session('treated', 80_000 + index * 1_000))
    const [kind] = compareArms([...control, ...treated], later, 60_000)
    expect(kind?.control.medianBilledTokens).toBe(105_500)
    expect(kind?.treated.medianBilledTokens).toBe(85_500)
    expect(kind?.control.medianDurationSeconds).toBe(600)
    expect(kind?.control.medianCacheReadShare).toBe(0.5)
    const saving = kind?.saving
    expect(saving?.median).toBeCloseTo(1 - 85_500 / 105_500, 6)
    expect(saving?.interval[0]).toBeLessThanOrEqual(saving?.median as number)
    expect(saving?.interval[1]).toBeGreaterThanOrEqual(saving?.median as number)
    expect(saving?.interval[0]).toBeGreaterThan(0)
    expect(kind?.verdict).toMatch(/^19\.0% less billed input per session \(95% interval/)
  })

  it("the median's interval is the order statistics a binomial table gives", () => {
    const values = Array.from({ length: minSessions }, (_, index) => index + 1)
    expect(medianInterval(values.slice(0, 5))).toBeNull()
    expect(medianInterval(values)).toEqual([1, 6])
    // n = 20: the 6th smallest and 6th largest (P(Bin(20, ½) ≤ 5) ≈ 0.021).
    const twenty = Array.from({ length: 20 }, (_, index) => index + 1)
    expect(medianInterval(twenty)).toEqual([6, 15])
  })

  it('the same sessions give the same interval every time', () => {
    const a = [5, 7, 9, 11, 13, 15]
    const b = [4, 6, 8, 10, 12, 14]
    expect(savingOf(a, b)).toEqual(savingOf(a, b))
  })
})
