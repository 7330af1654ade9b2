import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  Calibration,
  conversationMargin,
  countFactorFrom,
  defaultFactor,
  maxRatio,
  minRatio,
  type CalibrationSync,
  type ConversationLesson,
  type ConversationRequest,
} from '../../src/calibration/calibration.ts'

const model = 'claude-sonnet-4-5'
const window = 200_000

function clock(start = 0): { now: () => number; advance: (ms: number) => void } {
  let time = start
  return { now: () => time, advance: (ms) => (time += ms) }
}

describe('calibration bounds what one request can teach', () => {
  it('prevents one absurd report from moving the factor outside the sane range', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.double({ min: 1e-9, max: 1e12, noNaN: true }),
        fc.double({ min: 1e-9, max: 1e12 }),
        async (estimated, actual) => {
          const calibration = new Calibration()
          await calibration.record(model, estimated, actual)
          expect(calibration.factor(model)).toBeGreaterThanOrEqual(minRatio * 1.02 - 1e-9)
          expect(calibration.factor(model)).toBeLessThanOrEqual(maxRatio * 1.02 + 1e-9)
        },
      ),
    )
  })

  it('prevents a named limit from cutting the window by more than half or raising it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: -10, max: 10 * window }), async (named) => {
        const calibration = new Calibration()
        await calibration.recordLimit(model, named, 'conversation:a', window)
        const learned = calibration.limit(model, 'conversation:a')
        if (learned !== undefined) {
          expect(learned).toBeGreaterThanOrEqual(window / 2)
          expect(learned).toBeLessThan(window)
        }
      }),
    )
  })

  it('prevents a limit learned in one scope from applying to another client or conversation', async () => {
    const calibration = new Calibration()
    await calibration.recordLimit(model, 150_000, 'tenant:aaaa', window)
    expect(calibration.limit(`${model}-20250929`, 'tenant:aaaa')).toBe(150_000)
    expect(calibration.limit(model, 'tenant:bbbb')).toBeUndefined()
    expect(calibration.limit(model, 'conversation:x/y')).toBeUndefined()
  })

  it('prevents a wrong limit from living forever: it expires after its TTL', async () => {
    const time = clock()
    const calibration = new Calibration(undefined, { ttlMs: 60_000, now: time.now })
    await calibration.recordLimit(model, 120_000, 'tenant:a', window)
    time.advance(59_000)
    expect(calibration.limit(model, 'tenant:a')).toBe(120_000)
    time.advance(2_000)
    expect(calibration.limit(model, 'tenant:a')).toBeUndefined()
  })

  it('prevents a wrong limit from surviving a success: a larger answered prompt clears it', async () => {
    const calibration = new Calibration()
    await calibration.recordLimit(model, 120_000, 'tenant:a', window)
    // A refusal's size (no scope) is not a success and leaves the limit alone.
    await calibration.record(model, 130_000, 130_000)
    expect(calibration.limit(model, 'tenant:a')).toBe(120_000)
    await calibration.record(model, 100_000, 110_000, 'tenant:a')
    expect(calibration.limit(model, 'tenant:a')).toBe(120_000)
    await calibration.record(model, 125_000, 125_000, 'tenant:a')
    expect(calibration.limit(model, 'tenant:a')).toBeUndefined()
  })

  it('prevents one tenant’s hard-to-estimate content from tightening another tenant’s budget', async () => {
    const calibration = new Calibration()
    for (let index = 0; index < 10; index++) await calibration.record(model, 1_000, 2_000, 'tenant:a')
    expect(calibration.factor(model, undefined, 'tenant:a')).toBeCloseTo(maxRatio * 1.02)
    expect(calibration.factor(model, undefined, 'tenant:b')).toBe(defaultFactor)
    // Without client authentication every client shares one pool (the documented trust model).
    await calibration.record(model, 1_000, 1_500, 'conversation:x')
    expect(calibration.factor(model, undefined, 'conversation:y')).toBeCloseTo(1.5 * 1.02)
  })

  it('shares the bounded values, scoped and with a TTL, and takes in a correction made elsewhere', async () => {
    const shared = new Map<string, number>()
    const pushed: unknown[] = []
    const sync: CalibrationSync = {
      load: async (_ratioKey, family, scope) => {
        const limit = shared.get(`${family}|${scope}`)
        return limit === undefined ? { ratios: [50] } : { ratios: [50], limit }
      },
      pushRatio: async (family, ratio) => void pushed.push({ family, ratio }),
      pushLimit: async (family, scope, limit, ttlMs) => {
        pushed.push({ family, scope, limit, ttlMs })
        shared.set(`${family}|${scope}`, limit)
      },
      clearLimit: async (family, scope) => void shared.delete(`${family}|${scope}`),
    }
    const calibration = new Calibration(sync, { ttlMs: 5_000, now: () => 0 })
    await calibration.recordLimit(model, 1_000, 'tenant:a', window)
    await calibration.record(model, 1, 1_000_000)
    expect(pushed).toEqual([
      { family: model, scope: 'tenant:a', limit: window / 2, ttlMs: 5_000 },
      { family: model, ratio: maxRatio },
    ])
    // A shared ratio written before this bound is clamped when read.
    await calibration.refresh(model, 'tenant:a')
    expect(calibration.factor(model)).toBeCloseTo(maxRatio * 1.02)
    shared.clear()
    await calibration.refresh(model, 'tenant:a')
    expect(calibration.limit(model, 'tenant:a')).toBeUndefined()
  })
})

/** A conversation's request: its key and its unedited prompt estimate. */
const sized = (key: string, unedited: number): ConversationRequest => ({ key, unedited })

describe('calibration per conversation', () => {
  it('sizes a conversation by its own answers, not by another conversation’s content', async () => {
    const calibration = new Calibration()
    // A JSON dump counts 30% more than estimated; prose 5% more.
    await calibration.record(model, 10_000, 13_000, 'scope', sized('json-session', 10_000))
    await calibration.record(model, 10_000, 10_500, 'scope', sized('prose-session', 10_000))
    expect(calibration.factor(model, sized('prose-session', 10_000))).toBeCloseTo(1.05 * 1.03)
    expect(calibration.factor(model, sized('json-session', 10_000))).toBeCloseTo(1.3 * 1.03)
    // The model-wide factor, for conversations with no answer yet, covers both.
    expect(calibration.factor(model, sized('new-session', 10_000))).toBeCloseTo(1.3 * 1.02)
    expect(calibration.factor(model)).toBeCloseTo(1.3 * 1.02)
  })

  it('sizes content added since the answered request with the largest of its own, the model’s and the prior', async () => {
    const calibration = new Calibration()
    await calibration.record(model, 10_000, 13_000, 'scope', sized('json-session', 10_000))
    await calibration.record(model, 10_000, 10_500, 'scope', sized('prose-session', 10_000))
    const own = 1.05 * 1.03
    const modelWide = 1.3 * 1.02
    expect(calibration.factor(model, sized('prose-session', 10_000))).toBeCloseTo(own)
    // A quarter of the next prompt is new.
    expect(calibration.factor(model, sized('prose-session', 10_000 + 10_000 / 3))).toBeCloseTo(
      own * 0.75 + modelWide * 0.25,
    )
    // A conversation already sized above the model stays at its own.
    await calibration.record(model, 10_000, 14_000, 'scope', sized('denser', 10_000))
    expect(calibration.factor(model, sized('denser', 20_000))).toBeCloseTo(1.4 * 1.03)
  })

  it('never sizes new content below the prior, even when every answer so far was of easier content', async () => {
    const calibration = new Calibration()
    await calibration.record(model, 10_000, 8_000, 'scope', sized('prose-session', 10_000))
    const own = 0.8 * 1.03
    expect(calibration.factor(model)).toBeCloseTo(0.8 * 1.02)
    expect(calibration.factor(model, sized('prose-session', 10_000))).toBeCloseTo(own)
    expect(calibration.factor(model, sized('prose-session', 20_000))).toBeCloseTo(own * 0.5 + defaultFactor * 0.5)
  })

  it('weighs new content against what went upstream, not against the client’s prompt before edits', async () => {
    const calibration = new Calibration()
    // ctxgate cleared 6,000 of the client's 10,000 estimated tokens; the edits stay frozen.
    await calibration.record(model, 4_000, 4_000, 'scope', sized('edited', 10_000))
    // 1,000 new tokens are a fifth of what goes upstream next (not a eleventh of the client's prompt).
    expect(calibration.factor(model, sized('edited', 11_000))).toBeCloseTo(1.03 * 0.8 + defaultFactor * 0.2)
  })

  it('counts a whole prompt as new when the client rewrote its history to something smaller', async () => {
    const calibration = new Calibration()
    await calibration.record(model, 10_000, 8_000, 'scope', sized('compacted', 10_000))
    expect(calibration.factor(model, sized('compacted', 3_000))).toBeCloseTo(defaultFactor)
  })

  it('sizes what went upstream before at its newest ratio, so a conversation getting easier is not held at its old high', async () => {
    const calibration = new Calibration()
    for (const [sent, actual] of [
      [10_000, 8_000],
      [20_000, 14_000],
      [40_000, 24_000],
    ] as const)
      await calibration.record(model, sent, actual, 'scope', sized('easier', sent))
    expect(calibration.factor(model, sized('easier', 40_000))).toBeCloseTo(0.6 * 1.03)
  })

  it('keeps only a conversation’s newest answers, so it follows the content it sends now', async () => {
    const calibration = new Calibration()
    await calibration.record(model, 10_000, 15_000, 'scope', sized('session', 10_000))
    for (let index = 0; index < 8; index++)
      await calibration.record(model, 10_000, 10_000, 'scope', sized('session', 10_000))
    expect(calibration.factor(model, sized('session', 10_000))).toBeCloseTo(1.03)
  })
})

describe('calibration per conversation across replicas', () => {
  /** A store both replicas share: model-wide ratios and each conversation's memory, as the Redis store keeps them. */
  function sharedStore(): { sync: CalibrationSync; memories: Map<string, unknown> } {
    const ratios = new Map<string, number[]>()
    const memories = new Map<string, unknown>()
    const sync: CalibrationSync = {
      load: async (ratioKey, _family, _scope, conversation) => {
        const memory = conversation === undefined ? undefined : memories.get(conversation)
        return {
          ratios: ratios.get(ratioKey) ?? [],
          ...(memory === undefined ? {} : { conversation: memory as ConversationLesson }),
        }
      },
      pushRatio: async (ratioKey, ratio, keep, conversation) => {
        ratios.set(ratioKey, [...(ratios.get(ratioKey) ?? []), ratio].slice(-keep))
        if (conversation) memories.set(conversation.key, conversation.memory)
      },
      pushLimit: async () => undefined,
      clearLimit: async () => undefined,
    }
    return { sync, memories }
  }

  it('sizes a conversation alike on every replica, whichever one saw its newest answer', async () => {
    const { sync } = sharedStore()
    const replicaA = new Calibration(sync)
    const replicaB = new Calibration(sync)
    const single = new Calibration()
    const answers = [
      { unedited: 10_000, sent: 10_000, actual: 8_000 },
      { unedited: 30_000, sent: 30_000, actual: 31_000 },
      { unedited: 34_000, sent: 12_000, actual: 11_000 },
    ]
    for (const [index, { unedited, sent, actual }] of answers.entries()) {
      const replica = index % 2 === 0 ? replicaA : replicaB
      await replica.refresh(model, 'scope', 'c')
      await replica.record(model, sent, actual, 'scope', sized('c', unedited))
      await single.record(model, sent, actual, 'scope', sized('c', unedited))
    }
    for (const replica of [replicaA, replicaB]) {
      await replica.refresh(model, 'scope', 'c')
      expect(replica.factor(model, sized('c', 40_000), 'scope')).toBe(single.factor(model, sized('c', 40_000), 'scope'))
    }
  })

  it('ignores a malformed shared memory and keeps what the replica learned itself', async () => {
    const { sync, memories } = sharedStore()
    const calibration = new Calibration(sync)
    await calibration.record(model, 10_000, 9_000, 'scope', sized('c', 10_000))
    const before = calibration.factor(model, sized('c', 12_000), 'scope')
    for (const broken of [
      { ratios: 'x', unedited: 1, sent: 1 },
      { ratios: [], unedited: 1, sent: 1 },
      { ratios: [1] },
    ]) {
      memories.set(`c\n${model}`, broken)
      await calibration.refresh(model, 'scope', 'c')
      expect(calibration.factor(model, sized('c', 12_000), 'scope')).toBe(before)
    }
    // A ratio outside the sane range is clamped when read, as any shared ratio is.
    memories.set(`c\n${model}`, { ratios: [50], unedited: 10_000, sent: 10_000 })
    await calibration.refresh(model, 'scope', 'c')
    expect(calibration.factor(model, sized('c', 10_000), 'scope')).toBeCloseTo(maxRatio * 1.03)
  })
})

describe("the start point's count (countFactorFrom)", () => {
  it('is the conversation’s newest ratio without the margin, and nothing before its first answer', async () => {
    const calibration = new Calibration()
    expect(countFactorFrom(calibration.factorInputs('claude-sonnet-4-5', 'c', 'scope'))).toBeUndefined()
    await calibration.record('claude-sonnet-4-5', 10_000, 9_000, 'scope', { key: 'c', unedited: 10_000 })
    await calibration.record('claude-sonnet-4-5', 12_000, 11_400, 'scope', { key: 'c', unedited: 12_000 })
    const inputs = calibration.factorInputs('claude-sonnet-4-5', 'c', 'scope')
    expect(countFactorFrom(inputs)).toBeCloseTo(0.95, 10)
    // The budget's factor keeps its margin above the same count.
    const planning = calibration.factor('claude-sonnet-4-5', { key: 'c', unedited: 12_000 }, 'scope')
    expect(planning).toBeCloseTo(0.95 * conversationMargin, 10)
  })
})
