/**
 * Turns the Messages requests of a one-call-per-turn tool loop (as the mock recorded them) into the
 * rounds `bestSchedule` prices, counted the way the mock bills: the longest request gives the rounds,
 * and each result's whole text comes from whichever request still carried it whole.
 */
import { promptBlocks } from '../src/mock/anthropic-messages.ts'
import type { ToolLoop } from '../src/replay/best-schedule.ts'
import { clearedNote } from '../src/rewrite/notes.ts'

type Json = Record<string, unknown>

export class NotAToolLoop extends Error {}

/** Requests (1-based) whose body replaced more tool results than the one before: where ctxgate made a batch. */
export function batchRequestsOf(bodies: readonly string[]): number[] {
  const batches: number[] = []
  let replaced = 0
  for (const [index, body] of bodies.entries()) {
    const count = toolResults(withoutCacheControl(JSON.parse(body)) as Json).filter((block) =>
      replacedByCtxgate(block['content']),
    ).length
    if (count > replaced) batches.push(index + 1)
    replaced = count
  }
  return batches
}

// Every text ctxgate puts in a result's place starts with "[ctxgate" (src/rewrite/notes.ts): the generic
// cleared note, one that names the file or command to get it back, and a fold.
const replacedByCtxgate = (content: unknown): boolean => typeof content === 'string' && content.startsWith('[ctxgate')

/** `placeholder` is what a cleared result holds (ctxgate's note by default). */
export function toolLoopOf(bodies: readonly string[], placeholder: string = clearedNote): ToolLoop {
  if (bodies.length === 0) throw new NotAToolLoop('no answered request to read the loop from')
  const requests = bodies.map((body) => withoutCacheControl(JSON.parse(body)) as Json)
  const whole = new Map<string, unknown>()
  for (const request of requests)
    for (const block of toolResults(request))
      if (!replacedByCtxgate(block['content']) && !whole.has(String(block['tool_use_id'])))
        whole.set(String(block['tool_use_id']), block['content'])
  const longest = requests.reduce((a, b) => (messagesOf(b).length > messagesOf(a).length ? b : a))
  const messages = messagesOf(longest)
  if (
    messages.length % 2 === 0 ||
    messages.some((message, index) => message['role'] !== (index % 2 ? 'assistant' : 'user'))
  )
    throw new NotAToolLoop('expected a user turn, then assistant call and user result turns in pairs')
  const withResults = (content: (block: Json) => unknown): Json[] =>
    messages.map((message) => ({
      ...message,
      content: Array.isArray(message['content'])
        ? (message['content'] as Json[]).map((block) =>
            block['type'] === 'tool_result' ? { ...block, content: content(block) } : block,
          )
        : message['content'],
    }))
  const wholeTokens = tokensPerMessage(
    longest,
    withResults((block) => whole.get(String(block['tool_use_id'])) ?? block['content']),
  )
  const clearedTokens = tokensPerMessage(
    longest,
    withResults(() => placeholder),
  )
  const rounds = []
  for (let call = 1; call < messages.length; call += 2)
    rounds.push({
      call: wholeTokens.messages[call] as number,
      result: wholeTokens.messages[call + 1] as number,
      // A result no larger than the note is left as it is.
      clearedResult: Math.min(clearedTokens.messages[call + 1] as number, wholeTokens.messages[call + 1] as number),
      ...toolCallOf(messages[call] as Json),
    })
  return { head: wholeTokens.head + (wholeTokens.messages[0] as number), rounds }
}

/** The round's calls (every parallel one), so the floor's need hazard can be judged on each. */
function toolCallOf(message: Json): { tools?: { id: string; name: string; input: unknown }[] } {
  const content = Array.isArray(message['content']) ? (message['content'] as Json[]) : []
  const uses = content.filter((block) => block['type'] === 'tool_use')
  return uses.length > 0
    ? { tools: uses.map((use) => ({ id: String(use['id']), name: String(use['name']), input: use['input'] })) }
    : {}
}

function messagesOf(request: Json): Json[] {
  return (request['messages'] as Json[] | undefined) ?? []
}

function toolResults(request: Json): Json[] {
  return messagesOf(request).flatMap((message) =>
    Array.isArray(message['content'])
      ? (message['content'] as Json[]).filter((block) => block['type'] === 'tool_result')
      : [],
  )
}

/** The head (tools and system) and each message's tokens, from the mock's own block counts. */
function tokensPerMessage(request: Json, messages: Json[]): { head: number; messages: number[] } {
  const blocks = promptBlocks({ ...request, messages })
  const headBlocks = promptBlocks({ ...request, messages: [] }).length
  const sum = (from: number, count: number): number =>
    blocks.slice(from, from + count).reduce((total, block) => total + block.tokens, 0)
  const perMessage: number[] = []
  let next = headBlocks
  for (const message of messages) {
    const count = Array.isArray(message['content']) ? (message['content'] as unknown[]).length : 1
    perMessage.push(sum(next, count))
    next += count
  }
  if (next !== blocks.length) throw new NotAToolLoop('message blocks do not line up with the mock’s count')
  return { head: sum(0, headBlocks), messages: perMessage }
}

function withoutCacheControl(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutCacheControl)
  if (value === null || typeof value !== 'object') return value
  const copy: Json = {}
  for (const [key, inner] of Object.entries(value)) if (key !== 'cache_control') copy[key] = withoutCacheControl(inner)
  return copy
}
