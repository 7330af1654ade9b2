import { openaiChatAgentReply, type ChatReply } from './openai-chat-agent.ts'
import { countTextTokens, imageTokens } from './token-count.ts'
import type { OpenAIPromptCache } from './prompt-cache.ts'
import type { MockAnswer, MockOptions, MockReplyKind } from './types.ts'

type Json = Record<string, unknown>

const perMessageTokens = 4

export function openaiError(
  status: number,
  type: string,
  message: string,
  code: string | null,
  param: string | null = null,
): MockAnswer {
  return { status, json: { error: { message, type, param, code } } }
}

function contentTokens(content: unknown): number {
  if (typeof content === 'string') return countTextTokens(content)
  if (!Array.isArray(content)) return 0
  return (content as Json[]).reduce((sum, part) => {
    if (part['type'] === 'text' || part['type'] === 'input_text' || part['type'] === 'output_text')
      return sum + countTextTokens(String(part['text'] ?? ''))
    if (part['type'] === 'image_url' || part['type'] === 'input_image') return sum + imageTokens
    return sum + countTextTokens(JSON.stringify(part))
  }, 0)
}

function messageTokens(message: Json): number {
  const calls = (message['tool_calls'] as Json[] | undefined) ?? []
  const callTokens = calls.reduce((sum, call) => sum + countTextTokens(JSON.stringify(call['function'] ?? call)), 0)
  return perMessageTokens + contentTokens(message['content']) + callTokens
}

/** Chat Completions' pairing rule (platform.openai.com, function calling): every tool call answered right after it, every tool message answering one. */
function pairingProblem(messages: Json[]): string | undefined {
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index] as Json
    if (message['role'] === 'tool')
      return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."
    const calls = message['role'] === 'assistant' ? ((message['tool_calls'] as Json[] | undefined) ?? []) : []
    if (calls.length === 0) continue
    const pending = new Set(calls.map((call) => String(call['id'])))
    let next = index + 1
    for (; next < messages.length && (messages[next] as Json)['role'] === 'tool'; next++) {
      const id = String((messages[next] as Json)['tool_call_id'])
      if (!pending.delete(id))
        return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."
    }
    if (pending.size > 0 && next < messages.length) {
      return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...pending].join(', ')}`
    }
    index = next - 1
  }
  return undefined
}

export function openaiChat(
  body: unknown,
  options: MockOptions,
  cache: OpenAIPromptCache,
  replyKind: MockReplyKind,
  sequence: number,
): MockAnswer {
  const invalid = invalidRequest(body)
  if (invalid) return invalid
  const request = body as Json
  const messages = request['messages'] as Json[]
  const model = String(request['model'])
  const tools = (request['tools'] as Json[] | undefined) ?? []
  const toolTokens = tools.reduce((sum, tool) => sum + countTextTokens(JSON.stringify(tool)), 0)
  const perMessage = messages.map(messageTokens)
  const promptTokens = 3 + toolTokens + perMessage.reduce((sum, value) => sum + value, 0)
  const tooLong = lengthRefusal(request, promptTokens, options.windowFor(model), options)
  if (tooLong) return tooLong
  const scope = `${model}\u0000${String(request['prompt_cache_key'] ?? '')}\u0000${JSON.stringify(tools)}`
  const cachedTokens = cache.use(
    scope,
    messages.map((message) => JSON.stringify(message)),
    perMessage,
    promptTokens,
  )

  const reply = chatReply(request, options, replyKind, sequence)
  const completionTokens =
    (reply.text === null ? 0 : countTextTokens(reply.text)) +
    (reply.toolCall ? 3 + countTextTokens(reply.toolCall.name) + countTextTokens(reply.toolCall.arguments) : 0)
  const { usage, ledger } = chatUsage(promptTokens, cachedTokens, completionTokens)
  const base = {
    id: `chatcmpl-mock${sequence}`,
    created: 1_767_225_600 + sequence,
    model,
    system_fingerprint: 'fp_mock',
  }
  if (request['stream'] !== true) return { status: 200, usage: ledger, json: completion(base, reply, usage) }
  const includeUsage = (request['stream_options'] as Json | undefined)?.['include_usage'] === true
  return { status: 200, usage: ledger, sse: chatFrames(base, reply, includeUsage ? usage : undefined) }
}

/** The API's 400 for a body it cannot take: not an object, no model or messages, calls and results unpaired. */
function invalidRequest(body: unknown): MockAnswer | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return openaiError(400, 'invalid_request_error', 'We could not parse the JSON body of your request.', null)
  const request = body as Json
  if (typeof request['model'] !== 'string')
    return openaiError(
      400,
      'invalid_request_error',
      "Missing required parameter: 'model'.",
      'missing_required_parameter',
      'model',
    )
  if (!Array.isArray(request['messages']))
    return openaiError(
      400,
      'invalid_request_error',
      "Missing required parameter: 'messages'.",
      'missing_required_parameter',
      'messages',
    )
  const problem = pairingProblem(request['messages'] as Json[])
  return problem ? openaiError(400, 'invalid_request_error', problem, null, 'messages') : undefined
}

/** The API's refusal of a prompt (or prompt and completion room) past the window. */
function lengthRefusal(
  request: Json,
  promptTokens: number,
  window: number,
  options: MockOptions,
): MockAnswer | undefined {
  if (promptTokens > window) {
    return openaiError(
      400,
      'invalid_request_error',
      `This model's maximum context length is ${window} tokens. However, your messages resulted in ${promptTokens} tokens. Please reduce the length of the messages.`,
      'context_length_exceeded',
      'messages',
    )
  }
  const completionLimit =
    options.replyRoomInWindow === false ? 0 : Number(request['max_completion_tokens'] ?? request['max_tokens'] ?? 0)
  if (completionLimit > 0 && promptTokens + completionLimit > window)
    return openaiError(
      400,
      'invalid_request_error',
      `This model's maximum context length is ${window} tokens. However, you requested ${promptTokens + completionLimit} tokens (${promptTokens} in the messages, ${completionLimit} in the completion). Please reduce the length of the messages or completion.`,
      'context_length_exceeded',
      'messages',
    )
  return undefined
}

/** The answer's usage as the API words it, and the same counts for the mock's ledger. */
function chatUsage(promptTokens: number, cachedTokens: number, completionTokens: number) {
  const usage = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: cachedTokens, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  }
  const ledger = {
    inputTokens: promptTokens - cachedTokens,
    cacheReadTokens: cachedTokens,
    cacheWrite5mTokens: 0,
    cacheWrite1hTokens: 0,
    outputTokens: completionTokens,
  }
  return { usage, ledger }
}

/** The agent loop's reply when it is on and a shell is offered; else a tool call on request, or text. */
function chatReply(request: Json, options: MockOptions, replyKind: MockReplyKind, sequence: number): ChatReply {
  const agent =
    options.agentSteps === undefined
      ? undefined
      : openaiChatAgentReply(request, options.agentSteps, sequence, options.agentRereadEvery)
  if (agent) return agent
  const tools = (request['tools'] as Json[] | undefined) ?? []
  const toolName = (tools[0]?.['function'] as Json | undefined)?.['name']
  if (replyKind === 'tool_use' && typeof toolName === 'string')
    return {
      text: null,
      toolCall: { id: `call_mock_${sequence}`, name: toolName, arguments: JSON.stringify({ step: sequence }) },
    }
  return { text: options.replyText(sequence) }
}

function finishReasonOf(reply: ChatReply): string {
  return reply.toolCall ? 'tool_calls' : 'stop'
}

function completion(base: Json, reply: ChatReply, usage: Json): Json {
  const { toolCall } = reply
  const message = {
    role: 'assistant',
    content: reply.text,
    refusal: null,
    ...(toolCall
      ? {
          tool_calls: [
            { id: toolCall.id, type: 'function', function: { name: toolCall.name, arguments: toolCall.arguments } },
          ],
        }
      : {}),
  }
  return {
    ...base,
    object: 'chat.completion',
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReasonOf(reply) }],
    usage,
  }
}

/** Chat SSE as the API streams it: role first, text word by word, then the call's name and arguments. */
function chatFrames(base: Json, reply: ChatReply, usage: Json | undefined): string[] {
  const chunk = (choices: unknown[], extra: Json = {}): string =>
    `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices, ...(usage ? { usage: null } : {}), ...extra })}\n\n`
  const delta = (value: Json, finishReason: string | null = null): string =>
    chunk([{ index: 0, delta: value, logprobs: null, finish_reason: finishReason }])
  const frames = [delta({ role: 'assistant', content: reply.text === null ? null : '', refusal: null })]
  for (const word of reply.text?.match(/\S+\s*/g) ?? []) frames.push(delta({ content: word }))
  const { toolCall } = reply
  if (toolCall) {
    const start = { index: 0, id: toolCall.id, type: 'function', function: { name: toolCall.name, arguments: '' } }
    frames.push(delta({ tool_calls: [start] }))
    frames.push(delta({ tool_calls: [{ index: 0, function: { arguments: toolCall.arguments } }] }))
  }
  frames.push(delta({}, finishReasonOf(reply)))
  if (usage) frames.push(chunk([], { usage }))
  frames.push('data: [DONE]\n\n')
  return frames
}
