import { describe, expect, it } from 'vitest'
import { nextEditResult } from '../../src/rewrite/next-edit.ts'
import type { ChatView, FrozenDecisions, MessageView } from '../../src/rewrite/types.ts'

const call = (id: string, tool = 'bash'): MessageView => ({
  role: 'assistant',
  tokens: 20,
  hash: `call-${id}`,
  startsUserTurn: false,
  toolCallIds: [id],
  toolCallNames: [tool],
  toolResults: [],
  hasThinking: false,
})
const result = (id: string, tokens: number): MessageView => ({
  role: 'user',
  tokens: tokens + 5,
  hash: `message-${id}`,
  startsUserTurn: false,
  toolCallIds: [],
  toolResults: [{ id, message: 0, tokens, hash: `content-${id}`, text: 'x' }],
  hasThinking: false,
})
const task: MessageView = { ...result('none', 0), toolResults: [], startsUserTurn: true, hash: 'task' }

function view(...rounds: [id: string, tokens: number, tool?: string][]): ChatView {
  return {
    model: 'claude-sonnet-4-5',
    headTokens: 1_000,
    maxOutputTokens: 0,
    messages: [task, ...rounds.flatMap(([id, tokens, tool]) => [call(id, tool), result(id, tokens)])],
  }
}

const next = (chat: ChatView, decisions: FrozenDecisions, excludeTools: string[] = []) =>
  nextEditResult({ view: chat, decisions, replacementTokens: 40, excludeTools })

describe('nextEditResult', () => {
  const chat = view(['a', 500], ['b', 30], ['c', 800, 'memory'], ['d', 900], ['e', 700])

  it('is the oldest result still sent whole', () => {
    expect(next(chat, { results: {} })).toBe('a')
  })

  it('skips results already replaced, but not one whose content changed since', () => {
    expect(next(chat, { results: { a: { hash: 'content-a', action: 'clear' } } })).toBe('c')
    expect(next(chat, { results: { a: { hash: 'other', action: 'clear' } } })).toBe('a')
  })

  it('from a message on, passes over every result before it', () => {
    // Message 7 holds d's result (task, then a call and a result per round).
    expect(
      nextEditResult({
        view: chat,
        decisions: { results: {} },
        replacementTokens: 40,
        excludeTools: [],
        fromMessage: 7,
      }),
    ).toBe('d')
  })

  it('eventually: takes a young file read a later batch may clear once it is old, but never the read of a file being edited', () => {
    const withInput = (message: MessageView, name: string, input: unknown): MessageView => ({
      ...message,
      toolCallNames: [name],
      toolCallInputs: [input],
    })
    // a: a bash output; b: a read of f.py; c: a read of g.py, which d then edits (the agent is working from it).
    const base = view(['a', 500], ['b', 900], ['c', 900], ['d', 900])
    const messages = base.messages.map((message) =>
      message.hash === 'call-b'
        ? withInput(message, 'Read', { file_path: 'f.py' })
        : message.hash === 'call-c'
          ? withInput(message, 'Read', { file_path: 'g.py' })
          : message.hash === 'call-d'
            ? withInput(message, 'Edit', { file_path: 'g.py', old_string: 'x', new_string: 'y' })
            : message,
    )
    const reads: ChatView = { ...base, messages }
    const from = (eventually: boolean) =>
      nextEditResult({
        view: reads,
        decisions: { results: {} },
        replacementTokens: 40,
        excludeTools: [],
        fromMessage: 3,
        eventually,
      })
    // Young, b's need hazard is above the below-budget cap today: passed over.
    expect(from(false)).toBe('d')
    expect(from(true)).toBe('b')
    // From c on: c is being edited (never cleared below budget), so the marker goes ahead of d.
    expect(
      nextEditResult({
        view: reads,
        decisions: { results: {} },
        replacementTokens: 40,
        excludeTools: [],
        fromMessage: 5,
        eventually: true,
      }),
    ).toBe('d')
  })

  it('skips results no larger than their replacement and tools never cleared', () => {
    expect(next(chat, { results: { a: { hash: 'content-a', action: 'clear' } } }, ['memory'])).toBe('d')
  })

  it('skips messages a frozen drop removed, and is undefined when nothing could be replaced', () => {
    // Message 5 is d's call; a drop keeping from there leaves d first.
    expect(next(chat, { results: {}, drop: { keepFrom: 7, hash: 'call-d', scope: 'rounds' } })).toBe('d')
    expect(next(view(['b', 30]), { results: {} })).toBeUndefined()
  })

  it('with prices, skips a small old result far from the next one, as the economy’s batch will', () => {
    // a saves 20 tokens; between it and b lie a 5,000-token user turn and b's call.
    const small = view(['a', 60])
    const far: ChatView = {
      ...small,
      messages: [...small.messages, { ...task, hash: 'talk', tokens: 5_000 }, call('b'), result('b', 3_000)],
    }
    const prices = { read: 0.1, write: 1.25, requestsAhead: 40 }
    expect(next(far, { results: {} })).toBe('a')
    expect(
      nextEditResult({ view: far, decisions: { results: {} }, replacementTokens: 40, excludeTools: [], prices }),
    ).toBe('b')
    // Next to each other, a is worth reaching back to.
    expect(
      nextEditResult({
        view: view(['a', 60], ['b', 3_000]),
        decisions: { results: {} },
        replacementTokens: 40,
        excludeTools: [],
        prices,
      }),
    ).toBe('a')
  })

  it('under eager folding, is the oldest output large enough to fold (as foldOld counts: at least foldMinTokens)', () => {
    const chat2 = view(['a', 299], ['b', 300], ['c', 900])
    const eager = (minTokens: number) =>
      nextEditResult({ view: chat2, decisions: { results: {} }, replacementTokens: 40, excludeTools: [], minTokens })
    expect(eager(300)).toBe('b')
    expect(eager(0)).toBe('a')
  })
})
