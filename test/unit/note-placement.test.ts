import { describe, expect, it } from 'vitest'
import { withNoteAtEditPoint } from '../../src/providers/openai/note-placement.ts'
import { systemNote } from '../../src/rewrite/notes.ts'
import type { ConversationMemory, SystemNoteCost } from '../../src/rewrite/pipeline.ts'
import type { ChatView } from '../../src/rewrite/types.ts'
import { runRewritten, viewOf, viewRound } from '../helpers/chat-view.ts'
import { output, type Json } from '../helpers/conversations.ts'
import { createRewriter, reportOf, sentBody } from '../helpers/rewrite.ts'

const note: Json = { role: 'system', content: 'NOTE' }
const isToolResult = (message: Json): boolean => message['role'] === 'tool'

describe('withNoteAtEditPoint', () => {
  const list: Json[] = [
    { role: 'user', content: 'task' },
    { role: 'assistant', tool_calls: [{ id: 'a' }, { id: 'b' }] },
    { role: 'tool', tool_call_id: 'a', content: 'cleared' },
    { role: 'tool', tool_call_id: 'b', content: 'kept' },
    { role: 'assistant', content: 'next' },
  ]

  it('goes after the whole run of results the earliest edit is in, never between a call’s results', () => {
    const placed = withNoteAtEditPoint({ rewritten: list, firstEdited: 2, edits: [], note, isToolResult })
    expect(placed).toEqual([...list.slice(0, 4), note, list[4]])
  })

  it('adds nothing while no edit is applied', () => {
    expect(withNoteAtEditPoint({ rewritten: list, firstEdited: -1, edits: [], note, isToolResult })).toEqual(list)
  })

  it('counts in the entries a drop took out: an edit after the drop keeps its place, one inside it goes after the first entry', () => {
    const drop = { kind: 'drop-messages', from: 1, to: 3, scope: 'rounds', note: 'dropped' } as const
    const afterDrop = [list[0] as Json, ...list.slice(3)]
    expect(withNoteAtEditPoint({ rewritten: afterDrop, firstEdited: 4, edits: [drop], note, isToolResult })).toEqual([
      ...afterDrop,
      note,
    ])
    expect(withNoteAtEditPoint({ rewritten: afterDrop, firstEdited: 1, edits: [drop], note, isToolResult })).toEqual([
      afterDrop[0],
      afterDrop[1],
      note,
      afterDrop[2],
    ])
  })
})

/** A Chat conversation of `rounds` tool rounds, each with a large result. */
function chatConversation(rounds: number, head: Json[] = [{ role: 'system', content: 'You are helpful.' }]): Json[] {
  const messages: Json[] = [...head, { role: 'user', content: 'Fix it.' }]
  for (let round = 0; round < rounds; round++)
    messages.push(
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: `call_${round}`, type: 'function', function: { name: 'bash', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: `call_${round}`, content: output('log', 16_000, round) },
    )
  return messages
}

const noteIndex = (messages: readonly Json[]): number =>
  messages.findIndex((message) => message['content'] === systemNote)

describe('the system note at the edit point, through the rewrite hook', () => {
  it('stays byte for byte where it was while the conversation grows without a new batch', async () => {
    const rewrite = createRewriter('openai-chat', 40_000)
    const first = sentBody(await rewrite({ model: 'gpt-5', messages: chatConversation(12) }))['messages'] as Json[]
    expect(noteIndex(first)).toBeGreaterThan(0)
    let previous = first
    for (let rounds = 13; rounds <= 15; rounds++) {
      const result = await rewrite({ model: 'gpt-5', messages: chatConversation(rounds) })
      if (reportOf(result)['newBatch'] === true) break
      const sent = sentBody(result)['messages'] as Json[]
      // Everything the previous request sent is the start of this one: the whole prefix stays cached.
      expect(JSON.stringify(sent.slice(0, previous.length))).toBe(JSON.stringify(previous))
      previous = sent
    }
    expect(previous).not.toBe(first)
  })

  it('uses the developer role when the client’s head does', async () => {
    const rewrite = createRewriter('openai-chat', 40_000)
    const messages = chatConversation(12, [{ role: 'developer', content: 'Be careful.' }])
    const sent = sentBody(await rewrite({ model: 'o3', messages }))['messages'] as Json[]
    expect(sent[noteIndex(sent)]).toEqual({ role: 'developer', content: systemNote })
  })

  it('is not there while nothing is edited, and never added twice when the client sends it back', async () => {
    const rewrite = createRewriter('openai-chat', 200_000)
    const small = sentBody(await rewrite({ model: 'gpt-5', messages: chatConversation(2) }))['messages'] as Json[]
    expect(noteIndex(small)).toBe(-1)
    const tight = createRewriter('openai-chat', 40_000)
    const once = sentBody(await tight({ model: 'gpt-5', messages: chatConversation(12) }))['messages'] as Json[]
    const again = sentBody(await createRewriter('openai-chat', 40_000)({ model: 'gpt-5', messages: once }))
    expect((again['messages'] as Json[]).filter((message) => message['content'] === systemNote)).toHaveLength(1)
  })

  it('with systemNotePlacement first-request, is in the head from the first request on', async () => {
    const rewrite = createRewriter('openai-responses', 200_000, { rewrite: { systemNotePlacement: 'first-request' } })
    const sent = sentBody(await rewrite({ model: 'gpt-5', instructions: 'Be brief.', input: 'hello' }))
    expect(sent['instructions']).toBe(`Be brief.\n\n${systemNote}`)
    expect(sent['input']).toBe('hello')
  })

  it('reserves room for the note in the budget before it goes in', async () => {
    const withNote = createRewriter('openai-chat', 200_000)
    const without = createRewriter('openai-chat', 200_000, { rewrite: { systemNote: false } })
    const body = { model: 'gpt-5', messages: chatConversation(2) }
    const reserved = Number(reportOf(await withNote(body))['estimatedAfter'])
    const bare = Number(reportOf(await without(body))['estimatedAfter'])
    expect(reserved - bare).toBeGreaterThan(50)
  })
})

describe('when the pipeline turns the note on, by placement', () => {
  const rounds = (count: number): ReturnType<typeof viewRound>[] =>
    Array.from({ length: count }, (_, index) => viewRound(1_000, `r${index}`))
  const noteOn = (view: ChatView, memory: ConversationMemory | undefined, note: SystemNoteCost) =>
    runRewritten(view, memory, { note }).noteOn
  const small = viewOf(rounds(3))
  const big = viewOf(rounds(12))
  const remembered: ConversationMemory = { decisions: { results: {} }, noteOn: true, messageCount: 7 }

  it('at the edit point: exactly while an edit is applied, whatever the conversation had before', () => {
    const note: SystemNoteCost = { text: systemNote, tokens: 90, at: 'edit-point' }
    expect(noteOn(small, undefined, note)).toBe(false)
    expect(noteOn(small, remembered, note)).toBe(false)
    expect(noteOn(big, undefined, note)).toBe(true)
  })

  it('at the head: from the first edit on, and then on every request', () => {
    const note: SystemNoteCost = { text: systemNote, tokens: 90, at: 'head' }
    expect(noteOn(small, undefined, note)).toBe(false)
    expect(noteOn(small, remembered, note)).toBe(true)
    expect(noteOn(big, undefined, note)).toBe(true)
  })

  it('from the first request: always', () => {
    expect(noteOn(small, undefined, { text: systemNote, tokens: 90, from: 'first-request' })).toBe(true)
  })
})
