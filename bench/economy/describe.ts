/**
 * Turns a Messages request body into the economy's description, counted with the fake upstream's
 * own token counter (the simulator's "exact counts"), and applies cleared results and the note.
 */
import { promptBlocks } from '../../src/mock/anthropic-messages.ts'
import type { PromptBlock } from '../../src/mock/prompt-cache.ts'
import { countTextTokens } from '../../src/mock/token-count.ts'
import type { ConversationCost, MessageCost, ResultCost } from '../../src/rewrite/economy/types.ts'
import { clearedNote, systemNote } from '../../src/rewrite/notes.ts'

export type Json = Record<string, unknown>

/** The fake upstream adds this much per request outside any block. */
export const perRequestTokens = 8
/** A cleared result as the fake upstream counts it: one text block's overhead plus the note. */
export const clearedTokens = 3 + countTextTokens(clearedNote)

const contentOf = (message: Json): Json[] =>
  typeof message['content'] === 'string' ? [{ type: 'text', text: message['content'] }] : (message['content'] as Json[])

/** The body with these results cleared and, when asked, the system note appended to the system prompt. */
export function editedBody(body: Json, cleared: ReadonlySet<string>, note: boolean): Json {
  const messages = (body['messages'] as Json[]).map((message) => {
    if (message['role'] !== 'user' || typeof message['content'] === 'string') return message
    const content = (message['content'] as Json[]).map((block) =>
      block['type'] === 'tool_result' && cleared.has(String(block['tool_use_id']))
        ? { ...block, content: clearedNote }
        : block,
    )
    return { ...message, content }
  })
  const out: Json = { ...body, messages }
  if (note) {
    const system = body['system']
    const existing = Array.isArray(system) ? (system as Json[]) : system ? [{ type: 'text', text: system }] : []
    out['system'] = [...existing, { type: 'text', text: systemNote }]
  }
  return out
}

export interface Described {
  readonly blocks: PromptBlock[]
  readonly conversation: ConversationCost
  /** Position in the block order of the last markable block of each message (-1: none). */
  readonly lastMarkable: readonly number[]
  /** Cumulative tokens at the end of each message. */
  readonly prefixAtMessage: readonly number[]
  readonly headBlocks: number
  readonly toolCount: number
  readonly total: number
}

/** `clientTokens`: the request as the client sent it, when `body` is an edited copy (default: `body`'s own size). */
export function describe(body: Json, budget: number, clientTokens?: number): Described {
  const blocks = promptBlocks(body)
  const toolCount = Array.isArray(body['tools']) ? (body['tools'] as unknown[]).length : 0
  const system = body['system']
  const headBlocks = toolCount + (Array.isArray(system) ? system.length : system ? 1 : 0)
  let position = headBlocks
  let running = perRequestTokens + blocks.slice(0, headBlocks).reduce((sum, block) => sum + block.tokens, 0)
  const headTokens = running
  const toolOf = new Map<string, { name: string; round: number }>()
  let rounds = 0
  const messages: MessageCost[] = []
  const lastMarkable: number[] = []
  const prefixAtMessage: number[] = []
  for (const [index, message] of (body['messages'] as Json[]).entries()) {
    const content = contentOf(message)
    const results: ResultCost[] = []
    let tokens = 0
    let markable = -1
    const uses = content.filter((block) => block['type'] === 'tool_use')
    for (const use of uses) toolOf.set(String(use['id']), { name: String(use['name']), round: rounds })
    if (uses.length > 0) rounds++
    for (const block of content) {
      const counted = (blocks[position] as PromptBlock).tokens
      tokens += counted
      if (isMarkable(block)) markable = position
      if (block['type'] === 'tool_result' && block['content'] !== clearedNote) {
        const id = String(block['tool_use_id'])
        const tool = toolOf.get(id)
        const own = counted - (block === content[0] ? 4 : 0)
        results.push({
          id,
          message: index,
          tokens: own,
          replacementTokens: clearedTokens,
          tool: tool?.name ?? '',
          round: tool?.round ?? 0,
        })
      }
      position++
    }
    running += tokens
    messages.push({ tokens, results })
    lastMarkable.push(markable)
    prefixAtMessage.push(running)
  }
  const conversation: ConversationCost = {
    headTokens,
    messages,
    clientTokens: clientTokens ?? running,
    rounds,
    budget,
    cacheTtl: '5m',
    msSinceLastRequest: undefined,
  }
  return { blocks, conversation, lastMarkable, prefixAtMessage, headBlocks, toolCount, total: running }
}

function isMarkable(block: Json): boolean {
  if (block['type'] === 'thinking' || block['type'] === 'redacted_thinking') return false
  return !(block['type'] === 'text' && String(block['text'] ?? '').trim() === '')
}
