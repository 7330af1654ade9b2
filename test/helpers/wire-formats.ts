import fc from 'fast-check'
import { countAnthropicRequest } from '../../src/mock/anthropic-messages.ts'
import type { WireFormat } from '../../src/providers/provider-contract.ts'
import { anthropicBody, buildMessages, output, stepArbitrary, type Json, type Step } from './conversations.ts'

/** One tool result as sent: its id, its content, and the unknown field the generator put on it (if any). */
export interface SentResult {
  readonly id: string
  readonly content: unknown
  readonly extra: unknown
}

/**
 * The same generated conversation (steps of tool rounds and user turns) written in one wire format,
 * with the readers a property needs to check what ctxgate sent.
 */
export interface WireFixture {
  readonly format: WireFormat
  /** The conversation list (`messages` or `input`) for these steps. */
  conversation(steps: readonly Step[]): Json[]
  body(list: readonly Json[], extra?: Json): Json
  list(body: Json): Json[]
  /** Everything before the list that the cache prefix starts with (system, instructions, tools), markers removed. */
  head(body: Json): string
  /** The first entry after the head: the task, which always stays and carries the client's own field. */
  firstMessage(body: Json): Json | undefined
  results(body: Json): SentResult[]
  /** Call ids per entry that makes a round of calls, oldest first (Responses lists each call as its own item). */
  rounds(body: Json): string[][]
  /** Thinking blocks or reasoning items, serialized: never modified. */
  thinking(body: Json): string[]
  /** Throws, as the API would refuse it, when a call lacks its result or a result its call. */
  assertAccepted(body: Json): void
  /** Whether an entry starts the model's reply (so a request ends just before it). */
  startsReply(entry: Json): boolean
}

const blocksOf = (message: Json): Json[] => (Array.isArray(message['content']) ? (message['content'] as Json[]) : [])

/** The list without the cache markers ctxgate adds (they move from request to request by design). */
export const withoutMarkers = (value: unknown): string =>
  JSON.stringify(value ?? null).replace(/,"cache_control":\{"type":"ephemeral"\}/g, '')

const anthropic: WireFixture = {
  format: 'anthropic-messages',
  conversation: buildMessages,
  body: (list, extra = {}) => anthropicBody(list, extra),
  list: (body) => body['messages'] as Json[],
  head: (body) => withoutMarkers([body['system'], body['tools']]),
  firstMessage: (body) => (body['messages'] as Json[])[0],
  results: (body) =>
    (body['messages'] as Json[])
      .flatMap(blocksOf)
      .filter((block) => block['type'] === 'tool_result')
      .map((block) => ({ id: String(block['tool_use_id']), content: block['content'], extra: block['x_block_field'] })),
  rounds: (body) =>
    (body['messages'] as Json[])
      .filter((message) => message['role'] === 'assistant')
      .map((message) =>
        blocksOf(message)
          .filter((block) => block['type'] === 'tool_use')
          .map((block) => String(block['id'])),
      )
      .filter((ids) => ids.length > 0),
  thinking: (body) =>
    (body['messages'] as Json[])
      .flatMap(blocksOf)
      .filter((block) => block['type'] === 'thinking')
      .map((block) => JSON.stringify(block)),
  // The fake upstream's own validation: tool pairing, at most 4 breakpoints, TTL order, non-empty text.
  assertAccepted: (body) =>
    void countAnthropicRequest(
      body,
      { windowFor: () => Number.MAX_SAFE_INTEGER, minCacheableFor: () => 0, replyText: () => '' },
      undefined,
    ),
  startsReply: (entry) => entry['role'] === 'assistant',
}

/** OpenAI Chat Completions: a system message, then assistant tool_calls answered by tool messages. */
export function chatMessages(steps: readonly Step[]): Json[] {
  const messages: Json[] = [
    { role: 'system', content: 'You are a careful agent.' },
    { role: 'user', content: 'Task: fix the failing build and report.', x_client_field: { keep: true } },
  ]
  steps.forEach((step, stepIndex) => {
    if (step.kind === 'turn') {
      messages.push({ role: 'assistant', content: `Done with part ${stepIndex}.` })
      messages.push({ role: 'user', content: `Now part ${stepIndex + 1}, please.` })
      return
    }
    const ids = Array.from({ length: step.calls }, (_, call) => `call_${stepIndex}_${call}`)
    messages.push({
      role: 'assistant',
      content: `Step ${stepIndex}: running ${step.calls} tools.`,
      tool_calls: ids.map((id) => ({
        id,
        type: 'function',
        function: { name: 'run', arguments: JSON.stringify({ step: stepIndex, id }) },
      })),
      ...(step.thinking ? { x_reasoning_note: `Thinking about step ${stepIndex}.` } : {}),
    })
    ids.forEach((id, call) =>
      messages.push({
        role: 'tool',
        tool_call_id: id,
        content: output(step.outputKind, step.sizes[call] ?? 100, stepIndex * 7 + call),
        ...(step.extraField ? { x_block_field: call } : {}),
      }),
    )
  })
  return messages
}

const chat: WireFixture = {
  format: 'openai-chat',
  conversation: chatMessages,
  body: (list, extra = {}) => ({
    model: 'gpt-4.1',
    max_completion_tokens: 1_000,
    tools: [
      { type: 'function', function: { name: 'run', description: 'Run a step.', parameters: { type: 'object' } } },
    ],
    messages: list,
    x_top_level_field: 'kept',
    ...extra,
  }),
  list: (body) => body['messages'] as Json[],
  head: (body) =>
    JSON.stringify([(body['messages'] as Json[]).filter((message) => message['role'] === 'system'), body['tools']]),
  firstMessage: (body) => (body['messages'] as Json[]).find((message) => message['role'] !== 'system'),
  results: (body) =>
    (body['messages'] as Json[])
      .filter((message) => message['role'] === 'tool')
      .map((message) => ({
        id: String(message['tool_call_id']),
        content: message['content'],
        extra: message['x_block_field'],
      })),
  rounds: (body) =>
    (body['messages'] as Json[])
      .filter((message) => message['role'] === 'assistant' && Array.isArray(message['tool_calls']))
      .map((message) => (message['tool_calls'] as Json[]).map((call) => String(call['id']))),
  thinking: (body) =>
    (body['messages'] as Json[])
      .filter((message) => 'x_reasoning_note' in message)
      .map((message) => JSON.stringify(message['x_reasoning_note'])),
  assertAccepted: (body) => assertChatPairing(body['messages'] as Json[]),
  startsReply: (entry) => entry['role'] === 'assistant',
}

/** The Chat API's rule: each assistant tool_calls message is followed at once by one tool message per call, and no tool message stands alone. */
function assertChatPairing(messages: readonly Json[]): void {
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index] as Json
    if (message['role'] === 'tool') throw new Error(`messages.${index}: a tool message without a preceding tool call`)
    if (message['role'] !== 'assistant' || !Array.isArray(message['tool_calls'])) continue
    const pending = new Set((message['tool_calls'] as Json[]).map((call) => String(call['id'])))
    let next = index + 1
    for (; next < messages.length && messages[next]?.['role'] === 'tool'; next++)
      if (!pending.delete(String(messages[next]?.['tool_call_id'])))
        throw new Error(`messages.${next}: answers no pending call`)
    if (pending.size > 0) throw new Error(`messages.${index}: calls without results: ${[...pending].join(', ')}`)
    index = next - 1
  }
}

/** OpenAI Responses: instructions, then items; each call and each output is its own item, paired by call_id. */
export function responsesInput(steps: readonly Step[]): Json[] {
  const items: Json[] = [
    {
      type: 'message',
      role: 'user',
      content: 'Task: fix the failing build and report.',
      x_client_field: { keep: true },
    },
  ]
  steps.forEach((step, stepIndex) => {
    if (step.kind === 'turn') {
      items.push({
        type: 'message',
        role: 'assistant',
        content: [{ type: 'output_text', text: `Done with part ${stepIndex}.` }],
      })
      items.push({ type: 'message', role: 'user', content: `Now part ${stepIndex + 1}, please.` })
      return
    }
    const ids = Array.from({ length: step.calls }, (_, call) => `call_${stepIndex}_${call}`)
    if (step.thinking)
      items.push({ type: 'reasoning', id: `rs_${stepIndex}`, summary: [], encrypted_content: `enc${stepIndex}` })
    for (const id of ids)
      items.push({
        type: 'function_call',
        call_id: id,
        name: 'run',
        arguments: JSON.stringify({ step: stepIndex, id }),
      })
    ids.forEach((id, call) =>
      items.push({
        type: 'function_call_output',
        call_id: id,
        output: output(step.outputKind, step.sizes[call] ?? 100, stepIndex * 7 + call),
        ...(step.extraField ? { x_block_field: call } : {}),
      }),
    )
  })
  return items
}

const responses: WireFixture = {
  format: 'openai-responses',
  conversation: responsesInput,
  body: (list, extra = {}) => ({
    model: 'gpt-4.1',
    max_output_tokens: 1_000,
    instructions: 'You are a careful agent.',
    tools: [{ type: 'function', name: 'run', description: 'Run a step.', parameters: { type: 'object' } }],
    input: list,
    x_top_level_field: 'kept',
    ...extra,
  }),
  list: (body) => body['input'] as Json[],
  head: (body) => JSON.stringify([body['instructions'], body['tools']]),
  firstMessage: (body) => (body['input'] as Json[])[0],
  results: (body) =>
    (body['input'] as Json[])
      .filter((item) => item['type'] === 'function_call_output')
      .map((item) => ({ id: String(item['call_id']), content: item['output'], extra: item['x_block_field'] })),
  rounds: (body) =>
    (body['input'] as Json[])
      .filter((item) => item['type'] === 'function_call')
      .map((item) => [String(item['call_id'])]),
  thinking: (body) =>
    (body['input'] as Json[]).filter((item) => item['type'] === 'reasoning').map((item) => JSON.stringify(item)),
  assertAccepted: (body) => assertResponsesPairing(body['input'] as Json[]),
  startsReply: (entry) =>
    entry['role'] === 'assistant' || entry['type'] === 'function_call' || entry['type'] === 'reasoning',
}

/** Every function_call_output answers an earlier function_call, and every call is answered. */
function assertResponsesPairing(items: readonly Json[]): void {
  const open = new Set<string>()
  items.forEach((item, index) => {
    if (item['type'] === 'function_call') open.add(String(item['call_id']))
    if (item['type'] === 'function_call_output' && !open.delete(String(item['call_id'])))
      throw new Error(`input.${index}: an output for no earlier call`)
  })
  if (open.size > 0) throw new Error(`calls without outputs: ${[...open].join(', ')}`)
}

export const wireFixtures: readonly WireFixture[] = [anthropic, chat, responses]

/** The requests an agent sends as the conversation grows: each list prefix that ends just before a reply, then the whole. */
export function requestsIn(fixture: WireFixture, list: readonly Json[]): Json[][] {
  const requests: Json[][] = []
  list.forEach((entry, index) => {
    const previous = list[index - 1]
    if (index > 0 && fixture.startsReply(entry) && previous && !fixture.startsReply(previous))
      requests.push(list.slice(0, index))
  })
  requests.push([...list])
  return requests
}

/** Generated steps for a conversation in any format. */
export const stepsArbitrary = (minLength: number, maxLength: number): fc.Arbitrary<Step[]> =>
  fc.array(stepArbitrary, { minLength, maxLength })
