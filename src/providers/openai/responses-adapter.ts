import type { TokenEstimator } from '../../rewrite/estimate.ts'
import { contentHash, hashText } from '../../rewrite/hash.ts'
import type { ClearableInput } from '../../rewrite/cleared-input.ts'
import type { MessageView, Role, ToolResultView } from '../../rewrite/types.ts'
import {
  NotAChatRequest,
  objectEntries,
  type Applied,
  type ChatAdapter,
  type SessionHints,
} from '../adapter-contract.ts'
import type { Json } from '../../util/json.ts'
import { openaiSessionHints, partsText, partsTokens } from './chat-adapter.ts'
import { responsesClearable, responsesWithClearedInputs } from './clear-inputs.ts'
import { editList, leadingSystemCount, withCacheKey } from './list-edits.ts'
import { carriesNote, withNoteAtEditPoint } from './note-placement.ts'

const perItemTokens = 4
const callTypes = new Set(['function_call', 'custom_tool_call', 'local_shell_call', 'computer_call'])
const outputTypes = new Set([
  'function_call_output',
  'custom_tool_call_output',
  'local_shell_call_output',
  'computer_call_output',
])

/**
 * The input as a list of items: a plain string (the SDK's simplest form) is one user message.
 * Anything else is not a conversation ctxgate can read.
 */
function inputItems(body: Json): Json[] {
  const input = body['input']
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }]
  if (!Array.isArray(input)) throw new NotAChatRequest('not a Responses request with an input list or string')
  return objectEntries(input as unknown[], 'input')
}

/**
 * OpenAI Responses: `input` is a list of items (or one string). Tool calls and their outputs are separate items
 * paired by `call_id`; reasoning items are opaque and never touched; `instructions` is the head.
 */
export const openaiResponsesAdapter: ChatAdapter = {
  view(body, estimator) {
    if (typeof body['model'] !== 'string') throw new NotAChatRequest('not a Responses request with a model')
    const items = inputItems(body)
    const lead = leadingSystemCount(items)
    const headTokens =
      3 +
      (typeof body['instructions'] === 'string' ? estimator.text(body['instructions']) : 0) +
      items.slice(0, lead).reduce((sum, item) => sum + perItemTokens + partsTokens(item['content'], estimator), 0) +
      (Array.isArray(body['tools']) ? estimator.value(body['tools']) : 0)
    const messages = items.slice(lead).map((item, index) => itemView(item, index, estimator))
    const maxOutputTokens = typeof body['max_output_tokens'] === 'number' ? body['max_output_tokens'] : 0
    // Server-side compaction asked for, or a compaction item sent back: the server manages this context.
    const serverManaged =
      (Array.isArray(body['context_management']) && body['context_management'].length > 0) ||
      items.some((item) => item['type'] === 'compaction')
    return { model: body['model'], headTokens, messages, maxOutputTokens, ...(serverManaged ? { serverManaged } : {}) }
  },

  sessionHints(body, view): SessionHints {
    return openaiSessionHints(body, view, inputItems(body))
  },

  // A developer message may come between items, so long as no reasoning item is parted from the item it precedes.
  noteAtEditPoint: true,
  // The view counts no tokens per content part, so this is a margin over the note's text, not a measured framing.
  dropNoteFraming: 3,

  apply(body, _view, options): Applied {
    const items = inputItems(body)
    const lead = leadingSystemCount(items)
    const edited = editList(
      responsesWithClearedInputs(items.slice(lead), options.edits),
      options.edits,
      replaceOutput,
      'input_text',
    )
    const note = options.systemNote
    const atEditPoint = options.systemNoteAt === 'edit-point'
    const rest =
      note && atEditPoint && !carriesNote(items, note)
        ? withNoteAtEditPoint({
            rewritten: edited,
            firstEdited: options.firstEditedMessage,
            edits: options.edits,
            note: { type: 'message', role: 'developer', content: [{ type: 'input_text', text: note }] },
            isToolResult: (item) => outputTypes.has(String(item['type'])),
            isToolCall: (item) => callTypes.has(String(item['type'])),
          })
        : edited
    const listChanged = options.edits.length > 0 || rest.length !== edited.length
    // The client's own input (list or string) when no edit touched it, so the body reads as "fields added only".
    const out: Json = { ...body, input: listChanged ? [...items.slice(0, lead), ...rest] : body['input'] }
    const instructions = typeof body['instructions'] === 'string' ? body['instructions'] : ''
    if (note && !atEditPoint && !instructions.endsWith(note))
      out['instructions'] = instructions.length > 0 ? `${instructions}\n\n${note}` : note
    const keyed = withCacheKey(body, out, options.sessionId)
    return {
      body: out,
      headers: {},
      tail: rest.length - 1,
      changed: listChanged || out['instructions'] !== body['instructions'] || keyed,
    }
  },
}

function itemView(item: Json, index: number, estimator: TokenEstimator): MessageView {
  const type = typeof item['type'] === 'string' ? item['type'] : 'message'
  let role: Role = item['role'] === 'user' ? 'user' : 'assistant'
  const toolCallIds: string[] = []
  const toolCallNames: string[] = []
  const toolCallInputs: unknown[] = []
  const toolCallClearable: (ClearableInput | undefined)[] = []
  const toolResults: ToolResultView[] = []
  let tokens = perItemTokens
  if (callTypes.has(type)) {
    toolCallIds.push(String(item['call_id']))
    toolCallNames.push(String(item['name'] ?? item['type']))
    toolCallInputs.push(item['arguments'] ?? item['input'] ?? item['action'])
    toolCallClearable.push(responsesClearable(item))
    tokens +=
      estimator.value(item['arguments'] ?? item['input'] ?? item['action'] ?? '') +
      estimator.text(String(item['name'] ?? ''))
  } else if (outputTypes.has(type)) {
    role = 'tool'
    const output = item['output']
    const outputTokens = typeof output === 'string' ? estimator.text(output) : partsTokens(output, estimator)
    tokens += outputTokens
    let hash: string | undefined
    toolResults.push({
      id: String(item['call_id']),
      message: index,
      tokens: outputTokens,
      text: partsText(output),
      get hash() {
        hash ??= contentHash(output)
        return hash
      },
    })
  } else if (type === 'message') tokens += partsTokens(item['content'], estimator)
  else tokens += estimator.value(item)
  let hash: string | undefined
  return {
    role,
    tokens,
    startsUserTurn: type === 'message' && role === 'user',
    toolCallIds,
    toolCallNames,
    toolCallInputs,
    toolCallClearable,
    toolResults,
    hasThinking: type === 'reasoning',
    get hash() {
      hash ??= hashText(JSON.stringify(item))
      return hash
    },
  }
}

function replaceOutput(item: Json, replacements: ReadonlyMap<string, string>): Json {
  if (!outputTypes.has(String(item['type']))) return item
  const text = replacements.get(String(item['call_id']))
  return text === undefined ? item : { ...item, output: text }
}
