import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Conversation, Message } from '../../src/replay/conversation.ts'
import { hiddenIn, neededStrings } from '../../src/replay/hidden/at-risk.ts'
import { HiddenCounter } from '../../src/replay/hidden/counter.ts'
import { ownInputNeeds, ownInputsHiddenIn } from '../../src/replay/hidden/own-inputs.ts'
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

describe('own input hidden (the second count)', () => {
  const write: Message = {
    role: 'assistant',
    content: [
      {
        type: 'tool_use',
        id: 'w1',
        name: 'Write',
        input: { file_path: 'lib/new.py', content: 'def compute_total(items):\n    return sum_of_prices(items)\n' },
      },
    ],
  }
  const edit: Message = {
    role: 'assistant',
    content: [
      {
        type: 'tool_use',
        id: 'e1',
        name: 'Edit',
        input: {
          file_path: 'lib/new.py',
          old_string: 'def compute_total(items):\n    return sum_of_prices(items)',
          new_string: 'def compute_total(items):\n    return load_config_file(items)',
        },
      },
    ],
  }
  const messages: Message[] = [
    { role: 'user', content: [{ type: 'text', text: 'Fix the totals.' }] },
    write,
    result('w1', 'File written.'),
    read('r2', 'lib/config.py'),
    result('r2', 'value = load_config_file()\n'),
    edit,
  ]
  const conversation = conversationOf(messages)
  const own = ownInputNeeds(conversation)
  const issue = neededStrings(conversation)
  const clearedWrite: Message = {
    role: 'assistant',
    content: [
      { type: 'tool_use', id: 'w1', name: 'Write', input: { file_path: 'lib/new.py', content: '[ctxgate: cleared]' } },
    ],
  }

  it("needs what the next message takes from the agent's own earlier input and from no tool output", () => {
    expect(own).toHaveLength(issue.length)
    const last = own[2]?.needed.map((entry) => entry.text) ?? []
    expect(last).toContain('compute_total')
    expect(last).toContain('sum_of_prices')
    expect(last).toContain('return sum_of_prices(items)')
    expect(last).toContain('lib/new.py')
    // From a tool output: the issue's measure, not this one.
    expect(last).not.toContain('load_config_file')
    expect(issue[2]?.needed.map((entry) => entry.text)).toContain('load_config_file')
    expect(own[2]?.needed.find((entry) => entry.text === 'compute_total')).toMatchObject({
      sourceTool: 'Write',
      sourceKind: 'edit',
      sourceId: 'w1',
      age: 1,
      where: 'Edit.old_string',
    })
  })

  it('never counts a string twice: none is needed by both measures', () => {
    for (const [at, request] of own.entries()) {
      const fromOutputs = new Set(issue[at]?.needed.map((entry) => entry.text))
      for (const entry of request.needed) expect(fromOutputs.has(entry.text)).toBe(false)
    }
  })

  it('counts an own-input string as hidden when the input was cleared or dropped, not when it was kept', () => {
    const last = own[2]
    if (!last) throw new Error('no third request')
    expect(ownInputsHiddenIn(last, { messages: messages.slice(0, 5) })).toEqual([])
    const cleared = ownInputsHiddenIn(last, { messages: [messages[0], clearedWrite, ...messages.slice(2, 5)] })
    expect(cleared.map((entry) => entry.text)).toContain('compute_total')
    expect(new Set(cleared.map((entry) => entry.fate))).toEqual(new Set(['cleared']))
    // The path is still in the cleared call's short field: not hidden.
    expect(cleared.map((entry) => entry.text)).not.toContain('lib/new.py')
    const dropped = ownInputsHiddenIn(last, { messages: [messages[0], ...messages.slice(3, 5)] })
    expect(new Set(dropped.map((entry) => entry.fate))).toEqual(new Set(['dropped']))
  })

  it("leaves a string in a tool output to the issue's measure, even when the agent's input also held it", () => {
    const echoed = conversationOf([...messages.slice(0, 2), result('w1', 'wrote compute_total'), ...messages.slice(3)])
    expect(ownInputNeeds(echoed)[2]?.needed.map((entry) => entry.text)).not.toContain('compute_total')
    // The agent wrote it first, so the issue's measure (rule 1) does not count it either.
    expect(neededStrings(echoed)[2]?.needed.map((entry) => entry.text)).not.toContain('compute_total')
  })

  it("counts both, apart, per request sent: the issue's tally does not move", () => {
    const counter = new HiddenCounter(issue, own)
    const alone = new HiddenCounter(issue)
    const sent = JSON.stringify({
      messages: [
        messages[0],
        clearedWrite,
        messages[2],
        read('r2', 'lib/config.py'),
        result('r2', '[ctxgate: cleared]'),
      ],
    })
    for (const each of [counter, alone]) {
      each.request(1, JSON.stringify({ messages: messages.slice(0, 1) }))
      each.request(2, undefined)
      each.request(3, sent)
    }
    expect(counter.tally).toEqual(alone.tally)
    expect(counter.tally.events).toBe(1)
    expect(counter.ownInputTally).toMatchObject({
      requests: 2,
      requestsWithEvents: 1,
      byFate: { cleared: counter.ownInputTally.events },
    })
    expect(counter.ownInputTally.events).toBeGreaterThanOrEqual(3)
    expect(alone.ownInputTally.events).toBe(0)
  })

  it('a policy that edits nothing hides no own input (property)', () => {
    const word = fc.stringMatching(/^[a-z]{3,8}(_[a-z]{3,8}){0,2}$/)
    const line = fc.array(word, { minLength: 1, maxLength: 6 }).map((words) => words.join(' '))
    const body = fc.array(line, { minLength: 1, maxLength: 5 }).map((lines) => lines.join('\n'))
    fc.assert(
      fc.property(fc.array(fc.tuple(body, line, fc.boolean()), { minLength: 1, maxLength: 8 }), (rounds) => {
        const history: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'Do the task.' }] }]
        rounds.forEach(([content, output, asText], index) => {
          const call: Message = {
            role: 'assistant',
            content: [
              { type: 'tool_use', id: `w${index}`, name: 'Write', input: { file_path: `d/f_${index}.txt`, content } },
            ],
          }
          history.push(call, result(`w${index}`, output))
          if (asText) history.push({ role: 'assistant', content: [{ type: 'text', text: content }] })
        })
        const needs = ownInputNeeds(conversationOf(history))
        let requestIndex = 0
        for (const [position, message] of history.entries()) {
          if (message.role !== 'assistant' || position === 0) continue
          const request = needs[requestIndex++]
          if (!request) throw new Error('request missing')
          expect(ownInputsHiddenIn(request, { system: 'x', messages: history.slice(0, position) })).toEqual([])
        }
      }),
    )
  })
})
