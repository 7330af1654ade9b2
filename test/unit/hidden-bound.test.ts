import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { countTextTokens } from '../../src/mock/token-count.ts'
import type { Conversation, Message } from '../../src/replay/conversation.ts'
import { promptBlocks } from '../../src/mock/anthropic-messages.ts'
import { boundRequests, fewestHidden, hindsightBound } from '../../src/replay/hidden/bound.ts'
import { shapedBound } from '../../src/replay/hidden/shaped-bound.ts'
import { conversationOf as conversationFor, read, result } from '../helpers/replay-messages.ts'

const edit = (id: string, path: string, text: string): Message => ({
  role: 'assistant',
  content: [{ type: 'tool_use', id, name: 'Edit', input: { file_path: path, old_string: 'x', new_string: text } }],
})
const conversationOf = (messages: Message[]): Conversation => conversationFor(messages, 'You are an agent.')

// An old read holds `alpha_needed`; two later reads are filler; then the agent edits with it.
const filler = 'lorem ipsum dolor '.repeat(200)
const history: Message[] = [
  { role: 'user', content: [{ type: 'text', text: 'Do the task.' }] },
  read('r1', 'src/a.ts'),
  result('r1', 'const alpha_needed = 1'),
  read('r2', 'src/b.ts'),
  result('r2', filler),
  read('r3', 'src/c.ts'),
  result('r3', filler),
  edit('e1', 'src/a.ts', 'alpha_needed + 1'),
]

describe('hindsight bound on needed-but-hidden', () => {
  it('is 0 where everything fits: keeping every block hides nothing', () => {
    const bound = hindsightBound(conversationOf(history), 1_000_000)
    expect(bound).toMatchObject({ refused: 0, events: 0 })
    expect(bound.sent).toBe(4)
  })

  it('keeps the small block that holds the string and gives up the filler, when only that fits', () => {
    const requests = boundRequests(conversationOf(history))
    const last = requests.at(-1)
    expect(last?.open).toEqual(['alpha_needed'])
    const room = (last?.mandatoryTokens ?? 0) + countTextTokens('const alpha_needed = 1')
    expect(fewestHidden(last!, room)).toBe(0)
    expect(fewestHidden(last!, room - 1)).toBe(1)
  })

  it('counts a request as refused when its first message and newest round alone exceed the room', () => {
    const bound = hindsightBound(conversationOf(history), 5)
    expect(bound.refused).toBe(bound.perRequest.length)
    expect(bound.events).toBe(0)
  })

  it('counts the mandatory part as the fake upstream counts it, the first message once when it is also the newest', () => {
    const counted = (messages: Message[]): number =>
      8 +
      promptBlocks({
        model: 'claude-test',
        system: [{ type: 'text', text: 'You are an agent.' }],
        messages,
      } as never).reduce((sum, block) => sum + block.tokens, 0)
    const [first, second] = boundRequests(conversationOf(history))
    expect(first?.mandatoryTokens).toBe(counted([history[0] as Message]))
    // The second request: the first message, and the newest round (the read and its result).
    expect(second?.mandatoryTokens).toBe(counted(history.slice(0, 3)))
  })

  it('is never above the events of any policy keeping whole blocks that fit, past 16 blocks too (property)', () => {
    const word = fc.constantFrom('alpha_one', 'beta_two', 'gamma_three', 'delta_four', 'epsilon_five', 'zeta_six')
    const text = fc.array(word, { minLength: 1, maxLength: 5 }).map((words) => words.join(' '))
    fc.assert(
      fc.property(
        fc.array(fc.tuple(text, fc.integer({ min: 0, max: 3 })), { minLength: 2, maxLength: 22 }),
        text,
        fc.integer({ min: 0, max: 60 }),
        fc.array(fc.boolean(), { minLength: 24, maxLength: 24 }),
        (rounds, quoted, spare, keep) => {
          const messages: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'Go.' }] }]
          rounds.forEach(([output, pad], index) => {
            messages.push(read(`t${index}`, `dir/f${index}.txt`))
            messages.push(result(`t${index}`, `${output}${' pad'.repeat(pad * 5)}`))
          })
          messages.push(edit('final', 'dir/f0.txt', quoted))
          const requests = boundRequests(conversationOf(messages))
          const last = requests.at(-1)
          if (!last) throw new Error('no request')
          const room = last.mandatoryTokens + spare
          // A policy: keep some removable blocks (any subset, as long as it fits), remove the rest.
          const kept = last.carriers.filter((_, at) => keep[at] === true)
          if (kept.reduce((sum, carrier) => sum + carrier.tokens, 0) > spare) return
          const shown = new Set(kept.flatMap((carrier) => [...carrier.shows]))
          expect(fewestHidden(last, room)).toBeLessThanOrEqual(last.open.length - shown.size)
        },
      ),
      { numRuns: 60 },
    )
  })
})

describe('hindsight bound with ctxgate’s edits', () => {
  /** A long Write after the read that holds the string: no prefix cut drops the Write and keeps the read. */
  const longWriteBeforeRead = (): Message[] => [
    ...history.slice(0, 3),
    {
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'w1', name: 'Write', input: { file_path: 'notes.md', content: filler } }],
    },
    result('w1', 'written'),
    read('r2', 'src/b.ts'),
    result('r2', 'short'),
    edit('e1', 'src/a.ts', 'alpha_needed + 1'),
  ]

  it('keeps the agent’s own calls: a long one leaves no room for the read the free bound keeps', () => {
    const messages = longWriteBeforeRead()
    const free = hindsightBound(conversationOf(messages), 1_000_000)
    const requests = boundRequests(conversationOf(messages))
    const last = requests.at(-1) as NonNullable<(typeof requests)[number]>
    // Room for the mandatory part and the small read, not for the long Write call as well.
    const room = last.mandatoryTokens + countTextTokens('const alpha_needed = 1') + 5
    expect(hindsightBound(conversationOf(messages), room).perRequest.at(-1)).toBe(0)
    expect(shapedBound(conversationOf(messages), room, { clearInputs: false }).perRequest.at(-1)).toBe(1)
    expect(shapedBound(conversationOf(messages), 1_000_000)).toMatchObject({ events: 0, refused: free.refused })
  })

  it('lets the long strings of old tool inputs go (round 10): the long Write no longer crowds out the read', () => {
    const messages = longWriteBeforeRead()
    const requests = boundRequests(conversationOf(messages))
    const last = requests.at(-1) as NonNullable<(typeof requests)[number]>
    // Room for the calls' short fields, not for the Write's 3,600-character content.
    const room = last.mandatoryTokens + countTextTokens('const alpha_needed = 1') + 100
    expect(shapedBound(conversationOf(messages), room, { clearInputs: false }).perRequest.at(-1)).toBe(1)
    expect(shapedBound(conversationOf(messages), room).perRequest.at(-1)).toBe(0)
  })

  it('is never below the free bound, and never refuses less (property)', () => {
    const word = fc.constantFrom('alpha_one', 'beta_two', 'gamma_three', 'delta_four')
    const text = fc.array(word, { minLength: 1, maxLength: 4 }).map((words) => words.join(' '))
    fc.assert(
      fc.property(
        fc.array(fc.tuple(text, fc.integer({ min: 0, max: 3 })), { minLength: 1, maxLength: 8 }),
        text,
        fc.integer({ min: 20, max: 2_000 }),
        (rounds, quoted, room) => {
          const messages: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'Go.' }] }]
          rounds.forEach(([output, pad], index) => {
            messages.push(read(`t${index}`, `dir/f${index}.txt`))
            messages.push(result(`t${index}`, `${output}${' pad'.repeat(pad * 5)}`))
          })
          // A long Write as the newest round: its input is the free bound's too (a call the newest results answer).
          messages.push({
            role: 'assistant',
            content: [{ type: 'tool_use', id: 'w', name: 'Write', input: { file_path: 'dir/w.txt', content: filler } }],
          })
          messages.push(result('w', 'written'))
          messages.push(edit('final', 'dir/f0.txt', quoted))
          const free = hindsightBound(conversationOf(messages), room)
          const shaped = shapedBound(conversationOf(messages), room)
          expect(shaped.refused).toBeGreaterThanOrEqual(free.refused)
          shaped.perRequest.forEach((events, at) => {
            const freeEvents = free.perRequest[at]
            if (events !== undefined && freeEvents !== undefined) expect(events).toBeGreaterThanOrEqual(freeEvents)
            if (events !== undefined) expect(freeEvents).toBeDefined()
          })
        },
      ),
      { numRuns: 60 },
    )
  })
})
