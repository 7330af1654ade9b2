import { describe, expect, it } from 'vitest'
import type { WireFormat } from '../../src/providers/provider-contract.ts'
import { chatFormat } from '../../src/providers/registry.ts'
import { TokenEstimator } from '../../src/rewrite/estimate.ts'
import { noteRoomTokens, nothingToDecide, type UndecidedRequest } from '../../src/rewrite/nothing-to-decide.ts'
import { systemNote } from '../../src/rewrite/notes.ts'
import { decideRewrite, type ConversationMemory } from '../../src/rewrite/pipeline.ts'
import { promptTokens } from '../../src/rewrite/prompt-tokens.ts'
import type { ChatView } from '../../src/rewrite/types.ts'
import { testDropNoteFraming, testPolicy } from '../helpers/chat-view.ts'
import type { Json } from '../helpers/conversations.ts'

const estimator = new TokenEstimator()
const anthropic = chatFormat('anthropic-messages')?.adapter
if (!anthropic) throw new Error('no Anthropic adapter')

/** The latency bench's small request: one user message of 2,000 characters. */
const shortBody: Json = {
  model: 'claude-sonnet-4-5',
  max_tokens: 64,
  messages: [{ role: 'user', content: 'x'.repeat(2_000) }],
}
const shortView = anthropic.view(shortBody, estimator)
const headNote = { at: 'head', from: 'first-edit' } as const
const shortRequest: UndecidedRequest = {
  view: shortView,
  memory: undefined,
  budget: 180_000,
  factorCeiling: 1.15,
  note: headNote,
  minCacheableTokens: 1_024,
}

/** The pipeline's decision for the same request and memory, with the note at the head from its first edit. */
function decided(view: ChatView, memory: ConversationMemory | undefined) {
  return decideRewrite({
    view,
    memory,
    limits: { window: 200_000, budget: 180_000 },
    policy: testPolicy,
    factor: 1.15,
    estimator,
    note: { text: systemNote, tokens: 80, ...headNote },
    dropNoteFraming: testDropNoteFraming,
    now: 1_000,
  })
}

describe('nothing to decide', () => {
  it('holds for a short first request with no tool call: the plan sends it as written', () => {
    expect(nothingToDecide(shortRequest)).toBe(true)
    const plan = decided(shortView, undefined)
    expect(plan.kind === 'rewritten' && plan.edits.length === 0 && !plan.noteOn).toBe(true)
  })

  it('does not hold for a conversation whose memory asks the plan for something', () => {
    const frozen = { decisions: { results: { toolu_1: { hash: 'h', action: 'clear', at: 1 } } } } as const
    const noteOn: ConversationMemory = { decisions: { results: {} }, noteOn: true }
    const marker: ConversationMemory = { decisions: { results: {} }, nextEditResult: 'toolu_1' }
    for (const memory of [frozen, noteOn, marker]) expect(nothingToDecide({ ...shortRequest, memory })).toBe(false)
    // The note stays on once on: the plan writes it into this request's head.
    const plan = decided(shortView, noteOn)
    expect(plan.kind === 'rewritten' && plan.noteOn).toBe(true)
  })

  it('does not hold when the note joins on the first request, or with a tool call or result in the request', () => {
    expect(nothingToDecide({ ...shortRequest, note: { at: 'head', from: 'first-request' } })).toBe(false)
    const withTool = anthropic.view(
      {
        ...shortBody,
        messages: [
          { role: 'user', content: 'Read it.' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }] },
        ],
      },
      estimator,
    )
    expect(nothingToDecide({ ...shortRequest, view: withTool })).toBe(false)
  })

  it('does not hold at the minimum cacheable length, or once the note’s room at the highest factor is over budget', () => {
    const tokens = promptTokens(shortView)
    expect(nothingToDecide({ ...shortRequest, minCacheableTokens: tokens + 1 })).toBe(true)
    expect(nothingToDecide({ ...shortRequest, minCacheableTokens: tokens })).toBe(false)
    const fits = (tokens + noteRoomTokens) * 1.15
    expect(nothingToDecide({ ...shortRequest, budget: fits })).toBe(true)
    expect(nothingToDecide({ ...shortRequest, budget: fits - 1 })).toBe(false)
  })
})

describe('the room kept for the system note', () => {
  /** A short request in each wire format, with no system prompt, a string one and a long list one. */
  const bodies: readonly [WireFormat, Json][] = [
    ['anthropic-messages', { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }],
    ['anthropic-messages', { ...shortBody, system: 'You are a coding agent.' }],
    ['anthropic-messages', { ...shortBody, system: [{ type: 'text', text: 'y'.repeat(6_000) }] }],
    ['openai-chat', { model: 'gpt-5', messages: [{ role: 'user', content: 'hi' }] }],
    [
      'openai-chat',
      {
        model: 'gpt-5',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'hi' },
        ],
      },
    ],
    ['openai-responses', { model: 'gpt-5', input: [{ role: 'user', content: 'hi' }] }],
    ['openai-responses', { model: 'gpt-5', instructions: 'Be brief.', input: [{ role: 'user', content: 'hi' }] }],
  ]

  it('is more than the note costs wherever any adapter writes it', () => {
    for (const [format, body] of bodies) {
      const adapter = chatFormat(format)?.adapter
      if (!adapter) throw new Error(`no adapter for ${format}`)
      const view = adapter.view(body, estimator)
      for (const at of ['head', 'edit-point'] as const) {
        const written = adapter.apply(body, view, {
          edits: [],
          systemNote,
          systemNoteAt: at,
          sessionId: '',
          minCacheableTokens: Number.POSITIVE_INFINITY,
          thinkingBound: false,
          firstEditedMessage: view.messages.length > 0 ? 0 : -1,
          estimator,
        })
        const cost = promptTokens(adapter.view(written.body, estimator)) - promptTokens(view)
        expect(cost).toBeGreaterThan(0)
        expect(cost).toBeLessThan(noteRoomTokens / 4)
      }
    }
  })
})
