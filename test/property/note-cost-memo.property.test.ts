import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { noteCostOnce } from '../../src/forward/rewrite-hook/note-cost-memo.ts'
import { anthropicMessagesAdapter } from '../../src/providers/anthropic/messages-adapter.ts'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import type { Json } from '../../src/util/json.ts'

/** What the probe reads of a body: everything but the messages after the first, and whether there are any. */
const probeInput = (body: Json): string => {
  const messages = body['messages'] as unknown[]
  return JSON.stringify({ ...body, messages: [messages[0]], cut: messages.length > 1 })
}

/** A frozen message is the parse memo's shared object; any other is parsed anew for each request. */
const sharedOrCopy = (message: object | undefined): unknown =>
  message === undefined || Object.isFrozen(message) ? message : structuredClone(message)

describe('the system note cost memo', () => {
  it('answers what measuring the body would, for any sequence of re-sent first messages and changed fields', () => {
    const estimator = new TokenEstimator()
    // Frozen, as the parse memo hands re-sent messages back: the same object request after request.
    const firsts = [
      Object.freeze({ role: 'user', content: 'a'.repeat(300) }),
      Object.freeze({ role: 'user', content: [{ type: 'text', text: 'b' }] }),
      // Short first messages come back from each parse as new objects.
      { role: 'user', content: 'short' },
      { role: 'user', content: [{ type: 'text', text: 'short' }] },
    ]
    const body = fc.record({
      first: fc.nat(3),
      later: fc.nat(3),
      system: fc.constantFrom(
        undefined,
        'be brief',
        [{ type: 'text', text: 'be brief' }],
        [{ text: 'be brief', type: 'text' }],
      ),
      tools: fc.constantFrom(undefined, [], [{ name: 'read', input_schema: {} }]),
      model: fc.constantFrom('claude-sonnet-4-5', 'claude-opus-4-1'),
      note: fc.constantFrom('note one', 'note two'),
      at: fc.constantFrom('head', 'edit-point'),
    })
    fc.assert(
      fc.property(fc.array(body, { minLength: 1, maxLength: 12 }), (sequence) => {
        for (const drawn of sequence) {
          const json: Json = {
            model: drawn.model,
            ...(drawn.system === undefined ? {} : { system: structuredClone(drawn.system) }),
            ...(drawn.tools === undefined ? {} : { tools: structuredClone(drawn.tools) }),
            messages: [
              sharedOrCopy(firsts[drawn.first]),
              ...Array.from({ length: drawn.later }, (_, index) => ({ role: 'user', content: `m${index}` })),
            ],
          }
          let measured: string | undefined
          const cost = noteCostOnce(
            { adapter: anthropicMessagesAdapter, estimator, note: drawn.note, at: drawn.at, body: json },
            () => {
              measured = probeInput(json)
              return `${measured}${drawn.note}${drawn.at}`.length
            },
          )
          expect(cost).toBe(`${probeInput(json)}${drawn.note}${drawn.at}`.length)
          if (measured !== undefined) expect(measured).toBe(probeInput(json))
        }
      }),
    )
  })

  it('measures every time for an adapter that does not promise the cut keeps only the first message', () => {
    const estimator = new TokenEstimator()
    const first = Object.freeze({ role: 'user', content: 'x' })
    const adapter = { ...anthropicMessagesAdapter, noteCostFromFirstMessage: undefined }
    let calls = 0
    for (let round = 0; round < 3; round++)
      noteCostOnce(
        { adapter, estimator, note: 'n', at: 'head', body: { model: 'm', messages: [first] } },
        () => ++calls,
      )
    expect(calls).toBe(3)
  })
})
