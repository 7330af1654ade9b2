import { describe, expect, it } from 'vitest'
import { findRefetches, refetchWindow } from '../../src/rewrite/refetch.ts'
import type { ChatView, MessageView } from '../../src/rewrite/types.ts'

const call = (id: string, name: string, input: unknown): MessageView => ({
  role: 'assistant',
  tokens: 20,
  hash: `call-${id}`,
  startsUserTurn: false,
  toolCallIds: [id],
  toolCallNames: [name],
  toolCallInputs: [input],
  toolResults: [],
  hasThinking: false,
})
const result = (id: string, message: number, tokens: number): MessageView => ({
  role: 'user',
  tokens: tokens + 5,
  hash: `result-${id}`,
  startsUserTurn: false,
  toolCallIds: [],
  toolResults: [{ id, message, tokens, hash: `h-${id}`, text: 'x' }],
  hasThinking: false,
})

function view(calls: readonly [string, string, unknown][]): ChatView {
  const messages: MessageView[] = [{ ...result('none', 0, 0), toolResults: [], startsUserTurn: true, hash: 'task' }]
  for (const [id, name, input] of calls) {
    messages.push(call(id, name, input))
    messages.push(result(id, messages.length, 500))
  }
  return { model: 'm', headTokens: 100, messages, maxOutputTokens: 0 }
}

describe('re-fetches', () => {
  const calls: [string, string, unknown][] = [
    ['a', 'Read', { file_path: 'src/a.ts' }],
    ['b', 'Bash', { command: 'npm test' }],
    ['c', 'Read', { file_path: 'src/c.ts' }],
    ['a2', 'Read', { file_path: 'src/a.ts', offset: 10 }],
    ['b2', 'Bash', { command: 'npm test' }],
    ['c2', 'Read', { file_path: 'src/c.ts' }],
  ]
  const edited = {
    results: { a: { hash: 'h-a', action: 'clear', at: 5 }, b: { hash: 'h-b', action: 'fold', at: 5 } },
  } as const

  it('counts new calls of the same tool and input, or reads of the same file, after an edit', () => {
    const found = findRefetches({ view: view(calls), decisions: edited, newFrom: 7, request: 6 })
    // a2 reads the cleared file again (another range still counts), b2 runs the folded command again; c2 was never edited.
    expect(found).toEqual([
      { tool: 'Read', tokens: 500 },
      { tool: 'Bash', tokens: 500 },
    ])
  })

  it('counts only calls new in this request, and only within the window after the edit', () => {
    expect(findRefetches({ view: view(calls), decisions: edited, newFrom: 13, request: 6 })).toEqual([])
    expect(findRefetches({ view: view(calls), decisions: edited, newFrom: 7, request: 5 + refetchWindow + 1 })).toEqual(
      [],
    )
    expect(findRefetches({ view: view(calls), decisions: { results: {} }, newFrom: 7, request: 6 })).toEqual([])
  })
})
