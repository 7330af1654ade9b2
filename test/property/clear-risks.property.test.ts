import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { callsOfView, clearRisks, viewRisks } from '../../src/rewrite/clear-order.ts'
import type { MessageView } from '../../src/rewrite/types.ts'

/** Calls that supersede, edit, re-run and read one another: the cases the risk classes tell apart. */
const call = fc.oneof(
  fc.record({ name: fc.constant('Read'), input: fc.record({ file_path: fc.constantFrom('a.ts', './a.ts', 'b.ts') }) }),
  fc.record({
    name: fc.constant('Read'),
    input: fc.record({ file_path: fc.constantFrom('a.ts', 'b.ts'), offset: fc.nat(3) }),
  }),
  fc.record({
    name: fc.constantFrom('Edit', 'Write'),
    input: fc.record({ file_path: fc.constantFrom('a.ts', 'b.ts') }),
  }),
  fc.record({
    name: fc.constant('Bash'),
    input: fc.record({ command: fc.constantFrom('npm test', 'ls', 'npx vitest run a') }),
  }),
)

/** An assistant message with its calls (ids from its place in the run), as the adapter views it. */
const assistant = (calls: readonly { name: string; input: unknown }[], at: number): MessageView => ({
  role: 'assistant',
  tokens: 10,
  hash: `m${at}`,
  startsUserTurn: false,
  hasThinking: false,
  toolResults: [],
  toolCallIds: calls.map((_, position) => `call_${at}_${position}`),
  toolCallNames: calls.map((one) => one.name),
  toolCallInputs: calls.map((one) => one.input),
})

describe('the risk classes of a view whose messages a previous request had', () => {
  it('are those of every call classed anew, request after request (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(call, { maxLength: 3 }), { minLength: 1, maxLength: 30 }),
        fc.array(fc.nat(5), { minLength: 1, maxLength: 8 }),
        (rounds, cuts) => {
          // One run's message views, re-sent as the same objects; each request is a prefix of it, as a client's grows.
          const run = rounds.map((calls, at) => assistant(calls, at))
          for (const cut of cuts) {
            const messages = run.slice(0, Math.max(1, run.length - cut))
            expect(viewRisks(messages)).toEqual(clearRisks(callsOfView(messages)))
          }
        },
      ),
      { numRuns: 300 },
    )
  })
})
