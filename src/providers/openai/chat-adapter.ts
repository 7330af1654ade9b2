import type { TokenEstimator } from '../../rewrite/estimate.ts'
import { contentHash, hashText } from '../../rewrite/hash.ts'
import type { ChatView, MessageView, Role, ToolResultView } from '../../rewrite/types.ts'
import { chatClearable, chatWithClearedInputs } from './clear-inputs.ts'
import { editList, leadingSystemCount, withCacheKey } from './list-edits.ts'
import { carriesNote, withNoteAtEditPoint } from './note-placement.ts'
import {
  agentFingerprint,
  conversationFingerprint,
  NotAChatRequest,
  objectEntries,
  type Applied,
  type ChatAdapter,
  type SessionHints,
} from '../adapter-contract.ts'
import { isJsonObject, type Json } from '../../util/json.ts'

const perMessageTokens = 4
const imageTokens = 1_600
const requestFramingTokens = 3

/** OpenAI Chat Completions: leading system/developer messages are the head; tool messages answer tool_calls by id. */
export const openaiChatAdapter: ChatAdapter = {
  view(body, estimator) {
    if (typeof body['model'] !== 'string' || !Array.isArray(body['messages']))
      throw new NotAChatRequest('not a Chat Completions request')
    const all = objectEntries(body['messages'] as unknown[], 'messages')
    const lead = leadingSystemCount(all)
    const headTokens =
      requestFramingTokens +
      all
        .slice(0, lead)
        .reduce((sum, message) => sum + perMessageTokens + partsTokens(message['content'], estimator), 0) +
      (Array.isArray(body['tools']) ? estimator.value(body['tools']) : 0)
    const messages = all.slice(lead).map((message, index) => messageView(message, index, estimator))
    const maxOutputTokens =
      typeof body['max_completion_tokens'] === 'number'
        ? body['max_completion_tokens']
        : typeof body['max_tokens'] === 'number'
          ? body['max_tokens']
          : 0
    return { model: body['model'], headTokens, messages, maxOutputTokens }
  },

  sessionHints(body, view): SessionHints {
    return openaiSessionHints(body, view, body['messages'])
  },

  requestUsage(body) {
    // Chat streams report usage only when asked (`stream_options.include_usage`, OpenAI API reference).
    if (body['stream'] !== true) return false
    const options = isJsonObject(body['stream_options']) ? body['stream_options'] : {}
    if (options['include_usage'] === true) return false
    body['stream_options'] = { ...options, include_usage: true }
    return true
  },

  // The API takes a system or developer message anywhere except between a tool call and its results.
  noteAtEditPoint: true,
  // The view counts no tokens per content part, so this is a margin over the note's text, not a measured framing.
  dropNoteFraming: 3,

  apply(body, _view, options): Applied {
    const all = body['messages'] as Json[]
    const lead = leadingSystemCount(all)
    const edited = editList(chatWithClearedInputs(all.slice(lead), options.edits), options.edits, replaceResult, 'text')
    const head = all.slice(0, lead)
    const note = options.systemNote && !carriesNote(all, options.systemNote) ? options.systemNote : undefined
    const noteMessage = note && { role: head[0]?.['role'] === 'developer' ? 'developer' : 'system', content: note }
    const atEditPoint = options.systemNoteAt === 'edit-point'
    const rest =
      noteMessage && atEditPoint
        ? withNoteAtEditPoint({
            rewritten: edited,
            firstEdited: options.firstEditedMessage,
            edits: options.edits,
            note: noteMessage,
            isToolResult: (message) => roleOf(message['role']) === 'tool',
          })
        : edited
    const headNote = noteMessage && !atEditPoint ? [noteMessage] : []
    // The client's own list when nothing in it changed, so the body can be told apart as "fields added only".
    const listChanged = options.edits.length > 0 || headNote.length > 0 || rest.length !== edited.length
    const out: Json = { ...body, messages: listChanged ? [...head, ...headNote, ...rest] : all }
    const keyed = withCacheKey(body, out, options.sessionId)
    return {
      body: out,
      headers: {},
      tail: rest.length - 1,
      changed: listChanged || keyed,
    }
  },
}

export function openaiSessionHints(body: Json, view: ChatView, items: unknown): SessionHints {
  const explicit = [body['prompt_cache_key'], body['user'], body['safety_identifier']].find(
    (value): value is string => typeof value === 'string' && value.length > 0,
  )
  const list = Array.isArray(items) ? (items as unknown[]) : [items]
  const firstUser =
    list.find((item) => isJsonObject(item) && item['role'] !== 'system' && item['role'] !== 'developer') ?? null
  const fingerprint = conversationFingerprint(view, firstUser)
  const agent = agentFingerprint(body['tools'], [body['instructions'], ...leadingSystemContents(list)])
  return explicit ? { explicit, fingerprint, agent } : { fingerprint, agent }
}

/** Contents of the system and developer messages the list starts with (the Responses API's `instructions` come first). */
function leadingSystemContents(list: readonly unknown[]): unknown[] {
  const contents: unknown[] = []
  for (const item of list) {
    if (!isJsonObject(item) || (item['role'] !== 'system' && item['role'] !== 'developer')) break
    contents.push(item['content'])
  }
  return contents
}

function messageView(message: Json, index: number, estimator: TokenEstimator): MessageView {
  const role = roleOf(message['role'])
  const calls = Array.isArray(message['tool_calls']) ? (message['tool_calls'] as unknown[]).filter(isJsonObject) : []
  const contentTokens = partsTokens(message['content'], estimator)
  let tokens = perMessageTokens + contentTokens
  for (const call of calls) tokens += estimator.value(call['function'] ?? call['custom'] ?? call)
  const toolResults: ToolResultView[] = []
  if (role === 'tool') {
    const content = message['content']
    let hash: string | undefined
    toolResults.push({
      id: String(message['tool_call_id'] ?? message['name'] ?? ''),
      message: index,
      tokens: contentTokens,
      text: typeof content === 'string' ? content : partsText(content),
      get hash() {
        hash ??= contentHash(content)
        return hash
      },
    })
  }
  let hash: string | undefined
  return {
    role,
    tokens,
    startsUserTurn: role === 'user',
    toolCallIds: calls.map((call) => String(call['id'])),
    toolCallNames: calls.map((call) => (isJsonObject(call['function']) ? String(call['function']['name'] ?? '') : '')),
    toolCallInputs: calls.map((call) => (isJsonObject(call['function']) ? call['function']['arguments'] : undefined)),
    toolCallClearable: calls.map(chatClearable),
    toolResults,
    hasThinking: false,
    get hash() {
      hash ??= hashText(JSON.stringify(message))
      return hash
    },
  }
}

function roleOf(role: unknown): Role {
  if (role === 'assistant') return 'assistant'
  if (role === 'tool' || role === 'function') return 'tool'
  if (role === 'user') return 'user'
  return 'system'
}

export function partsTokens(content: unknown, estimator: TokenEstimator): number {
  if (typeof content === 'string') return estimator.text(content)
  if (!Array.isArray(content)) return 0
  return (content as unknown[]).filter(isJsonObject).reduce<number>((sum, part) => {
    if (typeof part['text'] === 'string') return sum + 2 + estimator.text(part['text'])
    if (part['type'] === 'image_url' || part['type'] === 'input_image') return sum + imageTokens
    return sum + estimator.value(part)
  }, 0)
}

export function partsText(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return (content as unknown[])
    .filter(isJsonObject)
    .map((part) => (typeof part['text'] === 'string' ? part['text'] : `[${String(part['type'])}]`))
    .join('\n')
}

function replaceResult(message: Json, replacements: ReadonlyMap<string, string>): Json {
  if (roleOf(message['role']) !== 'tool') return message
  const text = replacements.get(String(message['tool_call_id'] ?? message['name'] ?? ''))
  return text === undefined ? message : { ...message, content: text }
}
