import type { TokenEstimator } from '../../rewrite/estimate.ts'
import { contentHash, hashText } from '../../rewrite/hash.ts'
import type { Edit, MessageView, Role, ToolResultView } from '../../rewrite/types.ts'
import {
  agentFingerprint,
  conversationFingerprint,
  NotAChatRequest,
  type Applied,
  type ChatAdapter,
  type SessionHints,
} from '../adapter-contract.ts'
import { memoOnFrozen } from '../../util/frozen-memo.ts'
import { isJsonObject, type Json } from '../../util/json.ts'
import { blocksOf } from './blocks.ts'
import { listViews } from './message-views.ts'
import { userIdDigest } from './user-id-digest.ts'
import { placeBreakpoints } from './cache-breakpoints.ts'
import { tooShortToMark, writtenAsSent } from './too-short-to-mark.ts'
import { withClearedInputs } from './clear-inputs.ts'

const perMessageTokens = 4
const perBlockTokens = 3
const imageTokens = 1_600
const requestFramingTokens = 10
/** Opt-in that lets the API drop thinking blocks whose prefix ctxgate changed (https://platform.claude.com/docs/en/build-with-claude/preserved-thinking). */
const bindingBeta = 'thinking-binding-controls-2026-08-01'

type Block = Json & { type?: unknown }

/** Anthropic Messages (`POST /v1/messages`): content blocks, tool_use / tool_result pairs, cache_control. */
export const anthropicMessagesAdapter: ChatAdapter = {
  copiesOnWrite: true,
  // A drop keeps `messages[0]` (with the note) and nothing after the dropped range.
  noteCostFromFirstMessage: true,
  // The note is one more text block in the first message, counted like every block.
  dropNoteFraming: perBlockTokens,

  view(body, estimator) {
    if (typeof body['model'] !== 'string' || !Array.isArray(body['messages']))
      throw new NotAChatRequest('not a Messages request')
    const { views: messages, holdsCompaction: compaction } = listViews(
      body['messages'] as unknown[],
      estimator,
      (message, index) => viewOnce(message, index, estimator),
      (message) => isJsonObject(message) && holdsCompaction(message),
    )
    const headTokens = headTokensOf(body, estimator)
    const maxOutputTokens = typeof body['max_tokens'] === 'number' ? body['max_tokens'] : 0
    const serverManaged = compaction || editsContext(body)
    return { model: body['model'], headTokens, messages, maxOutputTokens, ...(serverManaged ? { serverManaged } : {}) }
  },

  sessionHints(body, view): SessionHints {
    const metadata = body['metadata']
    const userId = isJsonObject(metadata) && typeof metadata['user_id'] === 'string' ? metadata['user_id'] : undefined
    const fingerprint = conversationFingerprint(view, (body['messages'] as unknown[])[0])
    const system = body['system']
    const agent = agentFingerprint(body['tools'], Array.isArray(system) ? system : [system])
    return userId ? { explicit: userIdDigest(userId), fingerprint, agent } : { fingerprint, agent }
  },

  apply(body, view, options): Applied {
    const original = body['messages'] as Json[]
    let messages: Json[] = withClearedInputs(applyReplacements(original, options.edits), options.edits)
    const drop = options.edits.find(
      (edit): edit is Extract<Edit, { kind: 'drop-messages' }> => edit.kind === 'drop-messages',
    )
    if (drop) messages = [withNote(messages[0] as Json, drop.note), ...messages.slice(drop.to)]
    const out: Json = { ...body, messages }
    if (options.systemNote) out['system'] = withSystemNote(body['system'], options.systemNote)
    // A request too short to cache skips the walk that would place nothing (too-short-to-mark.ts).
    const { count: breakpoints, promisedResult } = tooShortToMark(view, options)
      ? { count: 0 }
      : placeBreakpoints(out, options, {
          head: (request) => headTokensOf(request, options.estimator),
          message: (message, index) => messageTokens(message, index, options.estimator),
        })
    const headers: Record<string, string> = {}
    let changed = options.edits.length > 0 || out['system'] !== body['system'] || breakpoints > 0
    if (
      options.thinkingBound &&
      options.firstEditedMessage >= 0 &&
      thinkingAfter(messages, drop ? 1 : options.firstEditedMessage) &&
      thinkingEnabled(body['thinking'])
    ) {
      out['thinking'] = { ...(body['thinking'] as Json), block_binding: { prefix_mismatch_behavior: 'drop_block' } }
      headers['anthropic-beta'] = bindingBeta
      changed = true
    }
    return {
      body: out,
      headers,
      tail: messages.length - 1,
      changed,
      breakpoints,
      ...(promisedResult !== undefined ? { promisedResult } : {}),
    }
  },

  asSent: writtenAsSent,
}

/** Views of messages the parser shares across requests (frozen, so they cannot change under the view), per estimator. */
const sharedViews = new WeakMap<
  TokenEstimator,
  WeakMap<object, { readonly index: number; readonly view: MessageView }>
>()

/** A re-sent message at the same place, counted by the same estimator, has the view it had. */
function viewOnce(message: unknown, index: number, estimator: TokenEstimator): MessageView {
  if (typeof message !== 'object' || message === null || !Object.isFrozen(message))
    return messageView(message, index, estimator)
  // The estimate and the reference count (docs/estimates.md) view the same messages: one memo each.
  let views = sharedViews.get(estimator)
  if (views === undefined) sharedViews.set(estimator, (views = new WeakMap()))
  const known = views.get(message)
  if (known !== undefined && known.index === index) return known.view
  const view = messageView(message, index, estimator)
  views.set(message, { index, view })
  return view
}

/** A message's tokens: a shared message's from its view (tokens do not depend on where it is), else counted. */
function messageTokens(message: unknown, index: number, estimator: TokenEstimator): number {
  const known =
    typeof message === 'object' && message !== null && Object.isFrozen(message)
      ? sharedViews.get(estimator)?.get(message)
      : undefined
  return known?.view.tokens ?? messageView(message, index, estimator).tokens
}

function messageView(message: unknown, index: number, estimator: TokenEstimator): MessageView {
  if (!isJsonObject(message)) throw new NotAChatRequest(`messages.${index} is not an object`)
  const role = message['role'] === 'assistant' ? 'assistant' : message['role'] === 'user' ? 'user' : ('system' as Role)
  const blocks: Block[] =
    typeof message['content'] === 'string'
      ? [{ type: 'text', text: message['content'] }]
      : Array.isArray(message['content'])
        ? (message['content'] as unknown[]).filter(isJsonObject)
        : []
  let tokens = perMessageTokens
  const toolCallIds: string[] = []
  const toolCallNames: string[] = []
  const toolCallInputs: unknown[] = []
  const toolCallClearable: ({ form: 'object'; value: unknown } | undefined)[] = []
  const toolResults: ToolResultView[] = []
  let hasText = false
  let hasThinking = false
  for (const block of blocks) {
    const blockTokens = perBlockTokens + contentTokens(block, estimator)
    tokens += blockTokens
    if (block.type === 'text' && typeof block['text'] === 'string' && block['text'].trim() !== '') hasText = true
    else if (block.type === 'tool_use' && role === 'assistant') {
      toolCallIds.push(String(block['id']))
      toolCallNames.push(String(block['name'] ?? ''))
      toolCallInputs.push(block['input'])
      toolCallClearable.push(isJsonObject(block['input']) ? { form: 'object', value: block['input'] } : undefined)
    } else if (block.type === 'thinking' || block.type === 'redacted_thinking') hasThinking = true
    else if (block.type === 'tool_result' && role === 'user')
      toolResults.push(resultView(block, index, blockTokens - perBlockTokens))
  }
  return lazyMessage(
    {
      role,
      tokens,
      startsUserTurn: role === 'user' && hasText && toolResults.length === 0,
      toolCallIds,
      toolCallNames,
      toolCallInputs,
      toolCallClearable,
      toolResults,
      hasThinking,
    },
    message,
  )
}

function contentTokens(block: Block, estimator: TokenEstimator): number {
  switch (block.type) {
    case 'text':
      return estimator.text(String(block['text'] ?? ''))
    case 'image':
      return imageTokens
    case 'tool_use':
      return estimator.text(String(block['name'] ?? '')) + estimator.value(block['input'] ?? {})
    case 'tool_result': {
      const content = block['content']
      if (typeof content === 'string') return estimator.text(content)
      if (Array.isArray(content))
        return (content as unknown[])
          .filter(isJsonObject)
          .reduce<number>((sum, inner) => sum + perBlockTokens + contentTokens(inner, estimator), 0)
      return 0
    }
    case 'thinking':
      return estimator.text(String(block['thinking'] ?? ''))
    default:
      return estimator.value(block)
  }
}

function resultView(block: Block, message: number, tokens: number): ToolResultView {
  const content = block['content']
  const text =
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? (content as unknown[])
            .filter(isJsonObject)
            .map((inner) => (inner['type'] === 'text' ? String(inner['text'] ?? '') : `[${String(inner['type'])}]`))
            .join('\n')
        : ''
  let hash: string | undefined
  return {
    id: String(block['tool_use_id']),
    message,
    tokens,
    text,
    // Hashing is paid only for results a decision looks at.
    get hash() {
      hash ??= contentHash(content)
      return hash
    },
  }
}

function lazyMessage(fields: Omit<MessageView, 'hash'>, message: Json): MessageView {
  let hash: string | undefined
  // Fields written out: `{ ...fields, get hash() }` gave every message view its own hidden class on Node 20.
  return {
    role: fields.role,
    tokens: fields.tokens,
    startsUserTurn: fields.startsUserTurn,
    toolCallIds: fields.toolCallIds,
    toolCallNames: fields.toolCallNames,
    toolCallInputs: fields.toolCallInputs,
    toolCallClearable: fields.toolCallClearable,
    toolResults: fields.toolResults,
    hasThinking: fields.hasThinking,
    get hash() {
      hash ??= hashText(JSON.stringify(message))
      return hash
    },
  }
}

function headTokensOf(body: Json, estimator: TokenEstimator): number {
  const tools = Array.isArray(body['tools'])
    ? (body['tools'] as unknown[]).reduce<number>((sum, tool) => sum + estimator.value(tool), 0)
    : 0
  return requestFramingTokens + systemTokens(body['system'], estimator) + tools
}

function systemTokens(system: unknown, estimator: TokenEstimator): number {
  if (typeof system === 'string') return estimator.text(system)
  if (Array.isArray(system))
    return (system as unknown[])
      .filter(isJsonObject)
      .reduce<number>((sum, block) => sum + perBlockTokens + estimator.text(String(block['text'] ?? '')), 0)
  return 0
}

function applyReplacements(messages: readonly Json[], edits: readonly Edit[]): Json[] {
  const replacements = new Map<string, string>()
  for (const edit of edits) if (edit.kind === 'replace-tool-result') replacements.set(edit.id, edit.text)
  if (replacements.size === 0) return [...messages]
  return messages.map((message) => {
    if (message['role'] !== 'user' || !Array.isArray(message['content'])) return message
    let changed = false
    const content = (message['content'] as unknown[]).map((block) => {
      if (!isJsonObject(block) || block['type'] !== 'tool_result') return block
      const text = replacements.get(String(block['tool_use_id']))
      if (text === undefined) return block
      changed = true
      // A marker the client put inside the replaced content moves to the block itself, so its slot is kept.
      const innerMarker = Array.isArray(block['content'])
        ? (block['content'] as unknown[]).filter(isJsonObject).find((inner) => inner['cache_control'])?.[
            'cache_control'
          ]
        : undefined
      return {
        ...block,
        content: text,
        ...(innerMarker && !block['cache_control'] ? { cache_control: innerMarker } : {}),
      }
    })
    return changed ? { ...message, content } : message
  })
}

function withNote(first: Json, note: string): Json {
  const content = first['content']
  const blocks = typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? content : []
  return { ...first, content: [...blocks, { type: 'text', text: note }] }
}

function withSystemNote(system: unknown, note: string): unknown {
  const noteBlock = { type: 'text', text: note }
  // Already there (a body ctxgate rewrote before): adding it twice would change the prefix.
  if (
    Array.isArray(system) &&
    isJsonObject(system[system.length - 1]) &&
    (system[system.length - 1] as Json)['text'] === note
  )
    return system
  if (typeof system === 'string') return system.length > 0 ? [{ type: 'text', text: system }, noteBlock] : [noteBlock]
  if (Array.isArray(system)) return [...system, noteBlock]
  return [noteBlock]
}

/**
 * Context editing that touches tool results or compacts (`context_management.edits` other than
 * thinking clearing; a compaction block the client sends back is found with the views): the server
 * edits this conversation's content, so ctxgate must not as well. Clearing thinking alone leaves tool
 * results to ctxgate (Claude Code sends `clear_thinking_20251015` with `keep: "all"` on every request).
 */
function editsContext(body: Json): boolean {
  const management = body['context_management']
  const edits: unknown[] = isJsonObject(management) && Array.isArray(management['edits']) ? management['edits'] : []
  return edits.some((edit) => !clearsThinkingOnly(edit))
}

/** Whether a message holds a compaction block; a re-sent (frozen) one is looked at once. */
const holdsCompaction = memoOnFrozen(blocksHoldCompaction)

function blocksHoldCompaction(message: Json): boolean {
  const content = message['content']
  if (!Array.isArray(content)) return false
  for (const block of content as unknown[]) if (isJsonObject(block) && block['type'] === 'compaction') return true
  return false
}

function clearsThinkingOnly(edit: unknown): boolean {
  return isJsonObject(edit) && typeof edit['type'] === 'string' && edit['type'].startsWith('clear_thinking_')
}

function thinkingAfter(messages: readonly Json[], from: number): boolean {
  return messages
    .slice(Math.max(0, from))
    .some((message) =>
      blocksOf(message).some((block) => block['type'] === 'thinking' || block['type'] === 'redacted_thinking'),
    )
}

function thinkingEnabled(thinking: unknown): boolean {
  return isJsonObject(thinking) && thinking['type'] !== 'disabled'
}
