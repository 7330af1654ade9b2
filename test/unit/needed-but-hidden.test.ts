import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Conversation, Message } from '../../src/replay/conversation.ts'
import { hiddenIn, neededStrings } from '../../src/replay/hidden/at-risk.ts'
import { HiddenCounter } from '../../src/replay/hidden/counter.ts'
import { distinctiveStrings, type MessageString } from '../../src/rewrite/distinctive.ts'
import { conversationOf as conversationFor, read, result } from '../helpers/replay-messages.ts'

const prose = (text: string): MessageString[] => [{ text, where: 'text', toolInput: false }]
const found = (strings: MessageString[]): string[] => distinctiveStrings(strings).map((entry) => entry.text)
const kinds = (text: string): Record<string, string> =>
  Object.fromEntries(distinctiveStrings(prose(text)).map((entry) => [entry.text, entry.kind]))

describe('distinctive strings', () => {
  it('finds paths, relative and absolute, and not fractions or lone words', () => {
    const strings = kinds('Open src/rewrite/plan.ts and /etc/hosts, then ./bench/run.sh; 1/2 of it, and then')
    expect(strings['src/rewrite/plan.ts']).toBe('path')
    expect(strings['/etc/hosts']).toBe('path')
    expect(strings['./bench/run.sh']).toBe('path')
    expect(strings['1/2']).toBeUndefined()
    expect(Object.keys(strings)).not.toContain('then')
  })

  it('finds snake_case and camelCase identifiers of six characters or more, whole', () => {
    const strings = kinds('call clear_order() on planRewrite and ToolResultView, not fooBar5 or a_b or plain words')
    expect(strings['clear_order']).toBe('identifier')
    expect(strings['planRewrite']).toBe('identifier')
    expect(strings['ToolResultView']).toBe('identifier')
    expect(strings['fooBar5']).toBe('identifier')
    expect(strings['a_b']).toBeUndefined()
    expect(strings['plain']).toBeUndefined()
  })

  it('takes an identifier only whole: no hit inside a longer word', () => {
    const strings = found(prose('the function make_clear_order_table exists'))
    expect(strings).toContain('make_clear_order_table')
    expect(strings).not.toContain('clear_order')
    expect(found(prose('renderHiddenTableNow'))).toEqual(['renderHiddenTableNow'])
  })

  it('finds hex ids and long numbers, not inside words or short ones', () => {
    const strings = kinds('commit 3f2a9c1b at port 8123, issue 42, version abc12345x, year2026')
    expect(strings['3f2a9c1b']).toBe('hex')
    expect(strings['8123']).toBe('number')
    expect(strings['42']).toBeUndefined()
    expect(Object.keys(strings)).not.toContain('12345')
    expect(Object.keys(strings)).not.toContain('2026')
    expect(Object.keys(strings)).not.toContain('deadbeef')
  })

  it('finds quoted strings of eight characters or more', () => {
    const strings = kinds(`expect "cleared output" and 'short' and \`npm run lint\``)
    expect(strings['cleared output']).toBe('quoted')
    expect(strings['npm run lint']).toBe('quoted')
    expect(strings['short']).toBeUndefined()
  })

  it('takes code lines of twenty characters or more from multi-line tool inputs only', () => {
    const code = 'function add(a, b) {\n  return a + b + offset\n}\nx'
    const fromTool = found([{ text: code, where: 'Edit.old_string', toolInput: true }])
    expect(fromTool).toContain('function add(a, b) {')
    expect(fromTool).toContain('return a + b + offset')
    expect(fromTool).not.toContain('}')
    const fromText = found([{ text: code, where: 'text', toolInput: false }])
    expect(fromText).not.toContain('return a + b + offset')
    const oneLine = found([{ text: 'return a + b + offset + more', where: 'Bash.command', toolInput: true }])
    expect(oneLine).not.toContain('return a + b + offset + more')
  })
})

const conversationOf = (messages: Message[]): Conversation =>
  conversationFor(messages, 'You are an agent. Work in the repository.')

describe('needed-but-hidden', () => {
  const messages: Message[] = [
    { role: 'user', content: [{ type: 'text', text: 'Fix the bug in lib/config.py please.' }] },
    read('r1', 'lib/config.py'),
    result('r1', 'def load_settings(path):\n    return parse_yaml_file(path)\n'),
    read('r2', 'lib/other.py'),
    result('r2', 'x = 1\n'),
    {
      role: 'assistant',
      content: [
        {
          type: 'tool_use',
          id: 'e1',
          name: 'Edit',
          input: {
            file_path: 'lib/config.py',
            old_string: 'def load_settings(path):\n    return parse_yaml_file(path)',
          },
        },
      ],
    },
  ]
  const needs = neededStrings(conversationOf(messages))

  it('needs what the next message quotes from tool output, not what the task or the agent already said', () => {
    expect(needs).toHaveLength(3)
    const last = needs[2]?.needed.map((entry) => entry.text) ?? []
    expect(last).toContain('load_settings')
    expect(last).toContain('parse_yaml_file')
    expect(last).toContain('return parse_yaml_file(path)')
    // In the first user message: known, so never hidden.
    expect(last).not.toContain('lib/config.py')
    const source = needs[2]?.needed.find((entry) => entry.text === 'load_settings')
    expect(source).toMatchObject({ sourceTool: 'Read', sourceKind: 'read', age: 1, where: 'Edit.old_string' })
  })

  it('counts a needed string as hidden only when the request as sent no longer shows it', () => {
    const last = needs[2]
    if (!last) throw new Error('no third request')
    const sent = { messages: messages.slice(0, 5) }
    expect(hiddenIn(last, sent)).toEqual([])
    const cleared = { messages: [...messages.slice(0, 2), result('r1', '[ctxgate: cleared]'), ...messages.slice(3, 5)] }
    expect(hiddenIn(last, cleared).map((entry) => entry.text)).toContain('load_settings')
  })

  it('says what kind of result a hidden string came from and what became of it', () => {
    const last = needs[2]
    if (!last) throw new Error('no third request')
    // r1 is a read of a file the next message edits: still "read" at this request (the edit is not made yet).
    expect(last.needed.find((entry) => entry.text === 'load_settings')).toMatchObject({
      sourceId: 'r1',
      sourceRisk: 'read',
    })
    const fates = (sent: unknown): string[] => [...new Set(hiddenIn(last, sent).map((entry) => entry.fate))]
    const clear = {
      messages: [...messages.slice(0, 2), result('r1', '[ctxgate: output cleared]'), ...messages.slice(3, 5)],
    }
    expect(fates(clear)).toEqual(['cleared'])
    const fold = {
      messages: [...messages.slice(0, 2), result('r1', '[ctxgate folded this tool output]'), ...messages.slice(3, 5)],
    }
    expect(fates(fold)).toEqual(['folded'])
    expect(fates({ messages: [messages[0], ...messages.slice(3, 5)] })).toEqual(['dropped'])
  })

  it('counts only the requests that were sent: one refused before sending is neither an event nor a request', () => {
    const counter = new HiddenCounter(needs)
    counter.request(1, JSON.stringify({ messages: messages.slice(0, 1) }))
    counter.request(2, JSON.stringify({ messages: messages.slice(0, 3) }))
    counter.request(3, undefined)
    expect(counter.tally).toMatchObject({ requests: 2, events: 0 })
    const cleared = {
      messages: [...messages.slice(0, 2), result('r1', '[ctxgate: output cleared]'), ...messages.slice(3, 5)],
    }
    counter.request(3, JSON.stringify(cleared))
    expect(counter.tally.requests).toBe(3)
    expect(counter.tally.events).toBeGreaterThan(0)
    expect(counter.tally.byRisk).toEqual({ read: counter.tally.events })
    expect(counter.tally.byFate).toEqual({ cleared: counter.tally.events })
  })

  it('a policy that edits nothing hides nothing (property)', () => {
    const word = fc.stringMatching(/^[a-z]{3,8}(_[a-z]{3,8}){0,2}$/)
    const line = fc.array(word, { minLength: 1, maxLength: 6 }).map((words) => words.join(' '))
    const output = fc.array(line, { minLength: 1, maxLength: 5 }).map((lines) => lines.join('\n'))
    fc.assert(
      fc.property(fc.array(fc.tuple(output, line), { minLength: 1, maxLength: 8 }), (rounds) => {
        const history: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'Do the task.' }] }]
        rounds.forEach(([text, next], index) => {
          history.push(read(`t${index}`, `dir/file_${index}.txt`), result(`t${index}`, text))
          history.push({ role: 'assistant', content: [{ type: 'text', text: next }] })
        })
        const conversation = conversationOf(history)
        let requestIndex = 0
        for (const [position, message] of history.entries()) {
          if (message.role !== 'assistant' || position === 0) continue
          const request = neededStrings(conversation)[requestIndex++]
          if (!request) throw new Error('request missing')
          // Unedited: the request as sent is the history itself.
          expect(hiddenIn(request, { system: conversation.system, messages: history.slice(0, position) })).toEqual([])
        }
      }),
    )
  })
})
