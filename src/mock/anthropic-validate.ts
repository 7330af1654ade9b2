type Json = Record<string, unknown>

/** A request the real Messages API would refuse with a 400 `invalid_request_error`. */
export class InvalidRequest extends Error {}

/** Parses and checks a Messages request the way the real API does, or throws InvalidRequest. */
export function validate(body: unknown): Json {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new InvalidRequest('The request body is not a JSON object.')
  const request = body as Json
  if (typeof request['model'] !== 'string') throw new InvalidRequest('model: Field required')
  if (!Array.isArray(request['messages'])) throw new InvalidRequest('messages: Field required')
  const messages = request['messages'] as Json[]
  messages.forEach((message, index) => {
    const content = message['content']
    if (typeof content === 'string') {
      if (content.length === 0 && message['role'] === 'user')
        throw new InvalidRequest(`messages.${index}: user messages must have non-empty content`)
      return
    }
    if (!Array.isArray(content)) throw new InvalidRequest(`messages.${index}.content: Input should be a valid list`)
    if (content.length === 0 && message['role'] === 'user')
      throw new InvalidRequest(`messages.${index}: user messages must have non-empty content`)
    for (const block of content as Json[]) {
      if (block['type'] === 'text' && block['text'] === '')
        throw new InvalidRequest('messages: text content blocks must be non-empty')
      if ((block['type'] === 'thinking' || block['type'] === 'redacted_thinking') && block['cache_control']) {
        throw new InvalidRequest(`messages.${index}: cache_control cannot be set on thinking blocks`)
      }
    }
  })
  checkToolPairing(messages)
  return request
}

export function blocksOf(message: Json): Json[] {
  const content = message['content']
  return typeof content === 'string' ? [{ type: 'text', text: content }] : (content as Json[])
}

/** The Messages API's pairing rule (docs.claude.com, tool use): every tool_use answered in the next message, every tool_result answering one. */
function checkToolPairing(messages: Json[]): void {
  messages.forEach((message, index) => {
    const uses =
      message['role'] === 'assistant'
        ? blocksOf(message)
            .filter((block) => block['type'] === 'tool_use')
            .map((block) => String(block['id']))
        : []
    const next = messages[index + 1]
    const answered =
      next && next['role'] === 'user'
        ? new Set(
            blocksOf(next)
              .filter((block) => block['type'] === 'tool_result')
              .map((block) => String(block['tool_use_id'])),
          )
        : new Set<string>()
    const missing = uses.filter((id) => !answered.has(id))
    if (missing.length > 0 && index + 1 < messages.length) {
      throw new InvalidRequest(
        `messages.${index}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
      )
    }
    if (message['role'] !== 'user') return
    const previous = messages[index - 1]
    const offered = new Set(
      previous && previous['role'] === 'assistant'
        ? blocksOf(previous)
            .filter((block) => block['type'] === 'tool_use')
            .map((block) => String(block['id']))
        : [],
    )
    blocksOf(message).forEach((block, blockIndex) => {
      if (block['type'] === 'tool_result' && !offered.has(String(block['tool_use_id']))) {
        throw new InvalidRequest(
          `messages.${index}.content.${blockIndex}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(block['tool_use_id'])}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
        )
      }
    })
  })
}

/** Fields the Messages endpoint requires beyond what count_tokens does, with the API's wording. */
export function checkGenerationFields(body: unknown): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return
  const maxTokens = (body as Json)['max_tokens']
  if (maxTokens === undefined) throw new InvalidRequest('max_tokens: Field required')
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens))
    throw new InvalidRequest('max_tokens: Input should be a valid integer')
}
