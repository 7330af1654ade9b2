import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  inputBytes,
  itemOverheadBytes,
  SocketConversation,
  type ConversationPlan,
} from '../../src/websocket/conversation.ts'
import { HistoryBudget } from '../../src/websocket/history-budget.ts'
import { readClientMessage, type ClientMessage } from '../../src/websocket/client-message.ts'

const inputJson = (plan: ConversationPlan): string =>
  plan.kind === 'full' ? Buffer.concat(inputBytes(plan)).toString('utf8') : ''
/** A response.create with these fields, as the socket reads it from the client's bytes. */
const create = (fields: Record<string, unknown>): ClientMessage =>
  readClientMessage(Buffer.from(JSON.stringify({ type: 'response.create', ...fields }))) as ClientMessage
const user = (text: string) => ({ type: 'message', role: 'user', content: text })
const answer = (text: string) => ({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] })

describe('SocketConversation', () => {
  it('continues the latest response with the whole history', () => {
    const conversation = new SocketConversation(1_000_000)
    const first = conversation.plan(create({ input: 'hi' }))
    expect(first.kind).toBe('full')
    expect(inputJson(first)).toBe('"hi"')
    expect(conversation.commit(first, 'resp_1', [answer('hello')])).toBe('kept')
    const next = conversation.plan(create({ previous_response_id: 'resp_1', input: [user('more')] }))
    expect(JSON.parse(inputJson(next))).toEqual([user('hi'), answer('hello'), user('more')])
  })

  it('knows only the latest response: an older id is not found when store is false, untracked otherwise', () => {
    const conversation = new SocketConversation(1_000_000)
    conversation.commit(conversation.plan(create({ input: [] })), 'resp_1', [])
    conversation.commit(conversation.plan(create({ previous_response_id: 'resp_1', input: [] })), 'resp_2', [])
    expect(conversation.plan(create({ previous_response_id: 'resp_1', store: false, input: [] }))).toEqual({
      kind: 'not-found',
      id: 'resp_1',
    })
    expect(conversation.plan(create({ previous_response_id: 'resp_1', input: [] }))).toEqual({ kind: 'untracked' })
  })

  it('drops the history past its bound and picks it up again from a full input', () => {
    const conversation = new SocketConversation(600)
    const big = conversation.plan(create({ input: [user('x'.repeat(700))] }))
    expect(conversation.commit(big, 'resp_1', [])).toBe('over-bound')
    expect(conversation.plan(create({ previous_response_id: 'resp_1', input: [] }))).toEqual({ kind: 'untracked' })
    const fresh = conversation.plan(create({ input: [user('short')] }))
    expect(conversation.commit(fresh, 'resp_2', [])).toBe('kept')
    expect(conversation.plan(create({ previous_response_id: 'resp_2', input: [] })).kind).toBe('full')
  })

  it('never holds more than its bound, whatever the messages', () => {
    const item = fc.record({ type: fc.constant('message'), role: fc.constant('user'), content: fc.string() })
    fc.assert(
      fc.property(
        fc.integer({ min: 50, max: 4_000 }),
        fc.array(
          fc.record({
            chain: fc.boolean(),
            input: fc.array(item, { maxLength: 4 }),
            output: fc.array(item, { maxLength: 3 }),
          }),
          { maxLength: 20 },
        ),
        (bound, steps) => {
          const conversation = new SocketConversation(bound)
          steps.forEach((step, index) => {
            const previous = step.chain ? conversation.latestResponseId : undefined
            const plan = conversation.plan(
              create({ ...(previous ? { previous_response_id: previous } : {}), input: step.input }),
            )
            conversation.commit(plan, `resp_${index}`, step.output)
            expect(conversation.bytes).toBeLessThanOrEqual(bound)
            // What is kept ends with the output of the response just committed.
            if (plan.kind === 'full' && conversation.tracked && step.output.length > 0) {
              const kept = conversation.plan(create({ previous_response_id: `resp_${index}`, input: [] }))
              const items =
                kept.kind === 'full' ? kept.items.map((entry) => JSON.parse(entry.toString()) as unknown) : []
              expect(items.slice(-step.output.length)).toEqual(step.output)
            }
          })
        },
      ),
    )
  })

  it('does not let all sockets together hold more than the shared budget: the socket past it is forwarded as sent', () => {
    const perSocket =
      Buffer.byteLength(JSON.stringify(user('x'.repeat(9_960))) + JSON.stringify(answer('ok'))) + 2 * itemOverheadBytes
    const budget = new HistoryBudget(3.5 * perSocket)
    const sockets = Array.from({ length: 5 }, () => new SocketConversation(1_000_000, budget))
    const results = sockets.map((socket, index) =>
      socket.commit(socket.plan(create({ input: [user('x'.repeat(9_960))] })), `resp_${index}`, [answer('ok')]),
    )
    expect(results.filter((result) => result === 'kept')).toHaveLength(3)
    expect(results.filter((result) => result === 'over-budget')).toHaveLength(2)
    expect(budget.used).toBeLessThanOrEqual(budget.max)
    expect(sockets[3]!.plan(create({ previous_response_id: 'resp_3', input: [] }))).toEqual({ kind: 'untracked' })
    sockets[0]!.release()
    const retried = sockets[4]!
    expect(retried.commit(retried.plan(create({ input: [user('y'.repeat(9_960))] })), 'resp_9', [answer('ok')])).toBe(
      'kept',
    )
    for (const socket of sockets) socket.release()
    expect(budget.used).toBe(0)
  })

  it('counts what it holds, not the JSON text: the kept items are their bytes plus a fixed overhead each', () => {
    const conversation = new SocketConversation(1_000_000)
    const plan = conversation.plan(create({ input: [user('é'.repeat(100))] }))
    conversation.commit(plan, 'resp_1', [])
    expect(conversation.bytes).toBe(Buffer.byteLength(JSON.stringify(user('é'.repeat(100)))) + itemOverheadBytes)
  })
})
