import {
  countStepsDone,
  isSummaryRequest,
  mockCallId,
  newestNarratedStep,
  planAgentReply,
  shellToolFrom,
  stepOfCallId,
  stepsDoneMarker,
  type ShellTool,
} from './agent-loop.ts'
import { countTextTokens, imageTokens } from './token-count.ts'
import type { OpenAIPromptCache } from './prompt-cache.ts'
import type { MockAnswer, MockOptions, MockReplyKind, MockUsage } from './types.ts'

type Json = Record<string, unknown>

const perItemTokens = 4

/** Commands the agent loop asks a shell tool to run: harmless, and each prints a lot. */
export const agentCommands: readonly string[] = [
  'seq 1 3000',
  'ls -la /usr/lib',
  'seq 1 5000 | tail -n 2500',
  'ls -la /usr/bin',
  'cat /etc/services',
]

export interface ResponsesTurnInput {
  /** The request body, as sent (its `input` is the new items when `history` is given). */
  readonly request: Json
  /** Items that come before `request.input`: the stored conversation `previous_response_id` names. */
  readonly history?: readonly unknown[]
  readonly options: MockOptions
  readonly cache: OpenAIPromptCache
  readonly replyKind: MockReplyKind
  readonly sequence: number
  /** Shell tool calls per user turn before the final answer (0: always answer with text). */
  readonly agentSteps: number
}

/** One answered request: the events a stream carries (in order) and what a later request may build on. */
export interface ResponsesTurn {
  readonly response: Json
  /** Event objects without `sequence_number`; the transport numbers them. */
  readonly events: readonly Json[]
  /** History plus this request's input, then the response's output: what `previous_response_id` continues. */
  readonly conversation: readonly unknown[]
  /** What the answer billed, for the mock's usage ledger (cached tokens are part of OpenAI's input count). */
  readonly usage: MockUsage
}

export interface ResponsesRefusal {
  readonly status: number
  readonly error: { message: string; type: string; param: string | null; code: string | null }
}

/** The fake Responses API: validates, counts, caches and answers one request, transport aside. */
export function answerResponses(input: ResponsesTurnInput): ResponsesTurn | ResponsesRefusal {
  const { request, options } = input
  if (typeof request['model'] !== 'string')
    return refusal("Missing required parameter: 'model'.", 'missing_required_parameter', 'model')
  const ownItems = inputItems(request['input'])
  if (ownItems === undefined)
    return refusal("Invalid type for 'input': expected a string or an array of input items.", 'invalid_type', 'input')
  const items = [...(input.history ?? []), ...ownItems]
  const model = request['model']
  const tools = Array.isArray(request['tools']) ? (request['tools'] as Json[]) : []
  const itemTokens = items.map(itemTokensOf)
  const headTokens = countTextTokens(String(request['instructions'] ?? '')) + countTextTokens(JSON.stringify(tools))
  const inputTokens = 3 + headTokens + itemTokens.reduce((sum, value) => sum + value, 0)
  const window = options.windowFor(model)
  // The input and max_output_tokens share the window; the API words both overflows the same way.
  const replyRoom = options.replyRoomInWindow === false ? 0 : Number(request['max_output_tokens'] ?? 0)
  if (inputTokens + replyRoom > window)
    return refusal(
      'Your input exceeds the context window of this model. Please adjust your input and try again.',
      'context_length_exceeded',
      'input',
    )
  const scope = `${model}\u0000${String(request['prompt_cache_key'] ?? '')}\u0000${JSON.stringify(tools)}\u0000${String(request['instructions'] ?? '')}`
  const cachedTokens = input.cache.use(
    scope,
    items.map((item) => JSON.stringify(item)),
    itemTokens.map((tokens, index) => tokens + (index === 0 ? 3 + headTokens : 0)),
    inputTokens,
  )
  const output = request['generate'] === false ? [] : outputFor(input, items, tools)
  const outputTokens = output.reduce<number>((sum, item) => sum + itemTokensOf(item), 0)
  const id = `resp_mock_${input.sequence}`
  const response: Json = {
    id,
    object: 'response',
    created_at: 1_767_225_600 + input.sequence,
    status: 'completed',
    error: null,
    incomplete_details: null,
    instructions: request['instructions'] ?? null,
    model,
    output,
    parallel_tool_calls: request['parallel_tool_calls'] ?? true,
    previous_response_id: request['previous_response_id'] ?? null,
    store: request['store'] ?? true,
    tool_choice: request['tool_choice'] ?? 'auto',
    tools,
    usage: {
      input_tokens: inputTokens,
      input_tokens_details: { cached_tokens: cachedTokens },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: inputTokens + outputTokens,
    },
  }
  const usage: MockUsage = {
    inputTokens: inputTokens - cachedTokens,
    cacheReadTokens: cachedTokens,
    cacheWrite5mTokens: 0,
    cacheWrite1hTokens: 0,
    outputTokens,
  }
  return { response, events: eventsFor(response, output), conversation: [...items, ...output], usage }
}

export function isRefusal(value: ResponsesTurn | ResponsesRefusal): value is ResponsesRefusal {
  return 'error' in value
}

function refusal(message: string, code: string, param: string): ResponsesRefusal {
  return { status: 400, error: { message, type: 'invalid_request_error', param, code } }
}

/** A string input is one user message; anything else must be a list of items. */
function inputItems(input: unknown): unknown[] | undefined {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }]
  if (input === undefined) return []
  return Array.isArray(input) ? input : undefined
}

function itemTokensOf(item: unknown): number {
  if (typeof item !== 'object' || item === null) return perItemTokens
  const record = item as Json
  if (record['type'] === 'function_call')
    return perItemTokens + countTextTokens(String(record['name'] ?? '') + String(record['arguments'] ?? ''))
  const content = record['content'] ?? record['output'] ?? record['summary']
  if (content === undefined) return perItemTokens + countTextTokens(JSON.stringify(record))
  return perItemTokens + contentTokens(content)
}

function contentTokens(content: unknown): number {
  if (typeof content === 'string') return countTextTokens(content)
  if (!Array.isArray(content)) return countTextTokens(JSON.stringify(content ?? ''))
  return (content as Json[]).reduce((sum, part) => {
    if (typeof part['text'] === 'string') return sum + countTextTokens(part['text'])
    if (part['type'] === 'input_image') return sum + imageTokens
    return sum + countTextTokens(JSON.stringify(part))
  }, 0)
}

/**
 * A function tool an agent runs shell commands with: Codex's `exec_command {cmd}`, a `shell` tool,
 * or any other the shared loop knows (opencode's `bash {command, description}`).
 */
function shellTool(tools: readonly Json[]): ShellTool | undefined {
  for (const tool of tools) {
    if (tool['type'] !== 'function' || typeof tool['name'] !== 'string') continue
    const properties = ((tool['parameters'] as Json | undefined)?.['properties'] ?? {}) as Json
    if (tool['name'] === 'exec_command' || 'cmd' in properties)
      return { name: tool['name'], argumentsFor: (cmd) => ({ cmd }) }
    if (tool['name'] === 'shell' || tool['name'] === 'local_shell') {
      const asList = (properties['command'] as Json | undefined)?.['type'] === 'array'
      return { name: tool['name'], argumentsFor: (cmd) => ({ command: asList ? ['bash', '-lc', cmd] : cmd }) }
    }
  }
  for (const tool of tools)
    if (tool['type'] === 'function' && typeof tool['name'] === 'string') {
      const found = shellToolFrom(tool['name'], tool['parameters'])
      if (found) return found
    }
  return undefined
}

function isUserMessage(item: Json | null): boolean {
  const isMessage = item?.['type'] === 'message' || (item?.['type'] === undefined && item?.['role'] !== undefined)
  return isMessage && item?.['role'] === 'user'
}

/**
 * How far the current agent turn has gone: tool calls answered since the newest user message, or
 * the steps a mock summary in that message says were done (Codex puts its compaction summary in
 * a user message), or the newest step id echoed in an answered call id, whichever is more.
 */
function stepsDoneThisTurn(items: readonly unknown[]): number {
  let done = 0
  let newestId = 0
  for (const raw of items) {
    const item = raw as Json | null
    if (isUserMessage(item)) {
      const text = JSON.stringify(item?.['content'] ?? '')
      const marked = text.includes(stepsDoneMarker) ? countStepsDone([{ toolResults: 0, text }]) : undefined
      done = marked ?? 0
      if (marked === undefined) newestId = 0
    }
    if (item?.['type'] === 'function_call_output') {
      done++
      newestId = Math.max(newestId, stepOfCallId(String(item['call_id'] ?? '')) ?? 0)
    }
  }
  return Math.max(done, newestId)
}

function lastUserText(items: readonly unknown[]): string {
  const item = items.findLast((entry) => isUserMessage(entry as Json | null)) as Json | undefined
  return item ? JSON.stringify(item['content'] ?? '') : ''
}

function outputFor(input: ResponsesTurnInput, items: readonly unknown[], tools: readonly Json[]): Json[] {
  const { sequence } = input
  const shell = shellTool(tools)
  const steps = stepsDoneThisTurn(items)
  const instructions = String(input.request['instructions'] ?? '')
  if (input.agentSteps > 0 && (isSummaryRequest(lastUserText(items)) || isSummaryRequest(instructions))) {
    const narrated = newestNarratedStep(items.map((item) => JSON.stringify(item)).join('\n'))
    const summary = planAgentReply(input.agentSteps, Math.max(steps, narrated), true)
    return [assistantMessage(sequence, summary.kind === 'tool' ? summary.narration : summary.text)]
  }
  if (shell && steps < input.agentSteps) {
    const command = agentCommands[steps % agentCommands.length] as string
    return [
      functionCall(
        mockCallId('call', steps + 1, sequence),
        sequence,
        shell.name,
        JSON.stringify(shell.argumentsFor(command, `Step ${steps + 1} of ${input.agentSteps}: run ${command}`)),
      ),
    ]
  }
  const firstTool = tools.find((tool) => tool['type'] === 'function' && typeof tool['name'] === 'string')
  if (input.replyKind === 'tool_use' && firstTool)
    return [
      functionCall(`call_mock_${sequence}`, sequence, String(firstTool['name']), JSON.stringify({ step: sequence })),
    ]
  const text = shell
    ? `Done: ran ${steps} commands. ${input.options.replyText(sequence)}`
    : input.options.replyText(sequence)
  return [assistantMessage(sequence, text)]
}

function assistantMessage(sequence: number, text: string): Json {
  return {
    type: 'message',
    id: `msg_mock_${sequence}`,
    status: 'completed',
    role: 'assistant',
    content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
  }
}

function functionCall(callId: string, sequence: number, name: string, args: string): Json {
  return {
    type: 'function_call',
    id: `fc_mock_${sequence}`,
    call_id: callId,
    name,
    arguments: args,
    status: 'completed',
  }
}

/** The full event sequence of a streamed response, as the SDK's stream helpers assemble it. */
function eventsFor(response: Json, output: readonly Json[]): Json[] {
  const pending = { ...response, status: 'in_progress', output: [], usage: null }
  const events: Json[] = [
    { type: 'response.created', response: pending },
    { type: 'response.in_progress', response: pending },
  ]
  output.forEach((item, index) => events.push(...itemEvents(item, index)))
  events.push({ type: 'response.completed', response })
  return events
}

function itemEvents(item: Json, outputIndex: number): Json[] {
  const itemId = item['id']
  if (item['type'] === 'function_call') {
    const args = String(item['arguments'])
    return [
      {
        type: 'response.output_item.added',
        output_index: outputIndex,
        item: { ...item, arguments: '', status: 'in_progress' },
      },
      { type: 'response.function_call_arguments.delta', item_id: itemId, output_index: outputIndex, delta: args },
      { type: 'response.function_call_arguments.done', item_id: itemId, output_index: outputIndex, arguments: args },
      { type: 'response.output_item.done', output_index: outputIndex, item },
    ]
  }
  const part = ((item['content'] as Json[] | undefined) ?? [])[0] ?? { type: 'output_text', text: '' }
  const text = String(part['text'] ?? '')
  const where = { item_id: itemId, output_index: outputIndex, content_index: 0 }
  return [
    {
      type: 'response.output_item.added',
      output_index: outputIndex,
      item: { ...item, status: 'in_progress', content: [] },
    },
    { type: 'response.content_part.added', ...where, part: { ...part, text: '' } },
    ...(text.match(/\S+\s*/g) ?? []).map((delta) => ({
      type: 'response.output_text.delta',
      ...where,
      delta,
      logprobs: [],
    })),
    { type: 'response.output_text.done', ...where, text, logprobs: [] },
    { type: 'response.content_part.done', ...where, part },
    { type: 'response.output_item.done', output_index: outputIndex, item },
  ]
}

/** SSE frames for HTTP: `event:` + `data:` per event, sequence numbers from 0, no `[DONE]`. */
export function responsesSseFrames(events: readonly Json[]): string[] {
  return events.map(
    (event, index) =>
      `event: ${String(event['type'])}\ndata: ${JSON.stringify({ ...event, sequence_number: index })}\n\n`,
  )
}

/** `POST /v1/responses` over HTTP: JSON, or SSE when `stream: true`. */
export function openaiResponses(body: unknown, context: Omit<ResponsesTurnInput, 'request' | 'history'>): MockAnswer {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return {
      status: 400,
      json: {
        error: {
          message: 'We could not parse the JSON body of your request.',
          type: 'invalid_request_error',
          param: null,
          code: null,
        },
      },
    }
  const turn = answerResponses({ ...context, request: body as Json })
  if (isRefusal(turn)) return { status: turn.status, json: { error: turn.error } }
  if ((body as Json)['stream'] !== true) return { status: 200, json: turn.response, usage: turn.usage }
  return { status: 200, sse: responsesSseFrames(turn.events), usage: turn.usage }
}
