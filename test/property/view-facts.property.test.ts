import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { roundsOf } from '../../src/rewrite/rounds.ts'
import { earliestCallsNeeded } from '../../src/rewrite/safe-cuts.ts'
import type { MessageView, ToolResultView } from '../../src/rewrite/types.ts'
import { viewFacts } from '../../src/rewrite/view-facts.ts'

/** The planner's reading of the messages before it was carried (plan.ts's PlanState constructor). */
function planStateReading(messages: readonly MessageView[]) {
  const callMessage = new Map<string, number>()
  messages.forEach((message, index) => {
    for (const id of message.toolCallIds) callMessage.set(id, index)
  })
  return {
    results: messages.flatMap((message) => message.toolResults),
    callMessage,
    rounds: roundsOf(messages),
    minCallNeeded: earliestCallsNeeded(messages, callMessage),
  }
}

// Few ids, so calls repeat and results answer calls made before, after or never.
const id = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h')
const messageSpec = fc.record({
  role: fc.constantFrom('user', 'assistant', 'system'),
  calls: fc.array(id, { maxLength: 2 }),
  results: fc.array(id, { maxLength: 2 }),
  named: fc.boolean(),
})

type MessageSpec = typeof messageSpec extends fc.Arbitrary<infer T> ? T : never

function messageOf(spec: MessageSpec, index: number): MessageView {
  const toolResults: ToolResultView[] = spec.results.map((result) => ({
    id: result,
    message: index,
    tokens: 5,
    text: result,
    hash: result,
  }))
  return {
    role: spec.role as MessageView['role'],
    tokens: 10,
    hash: '',
    startsUserTurn: spec.role === 'user' && spec.results.length === 0,
    toolCallIds: spec.role === 'assistant' ? spec.calls : [],
    ...(spec.named ? { toolCallNames: spec.calls.map((call) => `tool-${call}`) } : {}),
    toolResults: spec.role === 'user' ? toolResults : [],
    hasThinking: false,
  }
}

/** A client's next message list: the same objects for what it re-sends, new ones for what it changed or added. */
const step = fc.oneof(
  fc.record({ kind: fc.constant('append' as const), messages: fc.array(messageSpec, { minLength: 1, maxLength: 4 }) }),
  fc.record({
    kind: fc.constant('replace-last' as const),
    count: fc.nat(3),
    messages: fc.array(messageSpec, { maxLength: 3 }),
  }),
  fc.record({ kind: fc.constant('same' as const) }),
  // Viewed anew (as a short message is each request): equal fields, other objects, results included.
  fc.record({ kind: fc.constant('copies' as const) }),
  fc.record({ kind: fc.constant('other-conversation' as const), messages: fc.array(messageSpec, { maxLength: 6 }) }),
  fc.record({ kind: fc.constant('earlier' as const), back: fc.nat(4) }),
)

describe("the plan's facts of the messages, carried from a recent request", () => {
  it('equal what the planner computed from every message, for any sequence of requests', () => {
    fc.assert(
      fc.property(
        fc.array(messageSpec, { maxLength: 8 }),
        fc.array(step, { minLength: 1, maxLength: 12 }),
        (first, steps) => {
          const sent: MessageView[][] = [first.map(messageOf)]
          const check = (messages: MessageView[]) => {
            const facts = viewFacts(messages)
            const expected = planStateReading(messages)
            expect(facts.results).toEqual(expected.results)
            facts.results.forEach((result, index) => expect(result).toBe(expected.results[index]))
            expect([...facts.callMessage]).toEqual([...expected.callMessage])
            expect(facts.rounds.count).toBe(expected.rounds.count)
            expect(facts.rounds.roundAt).toEqual(expected.rounds.roundAt)
            expect([...facts.rounds.callOf]).toEqual([...expected.rounds.callOf])
            expect(facts.minCallNeeded).toEqual(expected.minCallNeeded)
          }
          check(sent[0] as MessageView[])
          for (const next of steps) {
            const last = sent.at(-1) as MessageView[]
            const added = (specs: MessageSpec[], from: number) =>
              specs.map((spec, index) => messageOf(spec, from + index))
            let messages: MessageView[]
            if (next.kind === 'append') messages = [...last, ...added(next.messages, last.length)]
            else if (next.kind === 'replace-last') {
              const kept = last.slice(0, Math.max(0, last.length - next.count))
              messages = [...kept, ...added(next.messages, kept.length)]
            } else if (next.kind === 'same') messages = [...last]
            else if (next.kind === 'copies')
              messages = last.map((message) => ({
                ...message,
                toolResults: message.toolResults.map((result) => ({ ...result })),
              }))
            else if (next.kind === 'earlier') messages = [...(sent[Math.max(0, sent.length - 1 - next.back)] ?? last)]
            else messages = added(next.messages, 0)
            sent.push(messages)
            check(messages)
          }
        },
      ),
      { numRuns: 500 },
    )
  })

  it('keeps no reading of a conversation whose results hold over a million tokens (its text would stay held)', () => {
    const large = (tokens: number): MessageView[] => [
      messageOf({ role: 'assistant', calls: ['a'], results: [], named: true }, 0),
      {
        ...messageOf({ role: 'user', calls: [], results: ['a'], named: false }, 1),
        toolResults: [{ id: 'a', message: 1, tokens, text: 'x', hash: 'x' }],
      },
    ]
    const over = large(1_000_001)
    expect(viewFacts([...over])).not.toBe(viewFacts(over))
    const under = large(1_000_000)
    expect(viewFacts([...under])).toBe(viewFacts(under))
  })

  it('prevents a kept reading from changing: the same messages again get the same facts', () => {
    const messages = [
      messageOf({ role: 'assistant', calls: ['a'], results: [], named: true }, 0),
      messageOf({ role: 'user', calls: [], results: ['a'], named: false }, 1),
    ]
    const once = viewFacts(messages)
    const longer = viewFacts([...messages, messageOf({ role: 'assistant', calls: ['b'], results: [], named: true }, 2)])
    expect(viewFacts([...messages])).toBe(once)
    expect(once.callMessage.has('b')).toBe(false)
    expect(longer.callMessage.get('b')).toBe(2)
  })
})
