import {
  appendMessage,
  textBlock,
  type Block,
  type Conversation,
  type Message,
  type ToolDefinition,
} from '../conversation.ts'

type Json = Record<string, unknown>

/** Converts an OpenAI chat message list (system, user, assistant with tool_calls, tool) to the neutral form. */
export function fromOpenAIMessages(
  openaiMessages: readonly Json[],
  notes: string[],
): { system: string; messages: Message[] } {
  const systemParts: string[] = []
  const messages: Message[] = []
  let unparsedArguments = 0
  for (const message of openaiMessages) {
    const role = message['role']
    const text = textOf(message['content'])
    if (role === 'system' || role === 'developer') {
      if (messages.length === 0) systemParts.push(text)
      else appendMessage(messages, { role: 'user', content: [textBlock(text)] })
    } else if (role === 'user') {
      if (text) appendMessage(messages, { role: 'user', content: [textBlock(text)] })
    } else if (role === 'assistant') {
      const content: Block[] = text ? [textBlock(text)] : []
      for (const call of (message['tool_calls'] as Json[] | undefined) ?? []) {
        const fn = (call['function'] as Json | undefined) ?? {}
        let input: unknown = {}
        try {
          input = JSON.parse(String(fn['arguments'] ?? '{}'))
        } catch {
          input = { arguments: String(fn['arguments'] ?? '') }
          unparsedArguments++
        }
        content.push({ type: 'tool_use', id: String(call['id']), name: String(fn['name'] ?? 'tool'), input })
      }
      appendMessage(messages, {
        role: 'assistant',
        content: content.length > 0 ? content : [textBlock('(empty reply)')],
      })
    } else if (role === 'tool') {
      appendMessage(messages, {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: String(message['tool_call_id']), content: text }],
      })
    }
  }
  if (unparsedArguments > 0)
    notes.push(`${unparsedArguments} tool call(s) had arguments that were not JSON; kept as a string`)
  return { system: systemParts.join('\n\n'), messages }
}

/** OpenAI tool schemas (`{type:'function', function:{name, description, parameters}}`) in neutral form. */
export function fromOpenAITools(tools: readonly Json[]): ToolDefinition[] {
  return tools.map((tool) => {
    const fn = (tool['function'] as Json | undefined) ?? tool
    return {
      name: String(fn['name'] ?? 'tool'),
      description: String(fn['description'] ?? ''),
      input_schema: (fn['parameters'] as Record<string, unknown> | undefined) ?? { type: 'object' },
    }
  })
}

export function textOf(content: unknown): string {
  if (typeof content === 'string') return content
  if (Array.isArray(content))
    return (content as Json[]).map((part) => (typeof part['text'] === 'string' ? part['text'] : '')).join('')
  return ''
}

/** mini-swe-agent's built-in tool: bash, with one string parameter, command. */
export const bashTool: ToolDefinition = {
  name: 'bash',
  description: 'Execute a bash command in the repository and return its exit code and output.',
  input_schema: {
    type: 'object',
    properties: { command: { type: 'string', description: 'The command to run.' } },
    required: ['command'],
  },
}

export function conversationFromOpenAI(parts: {
  id: string
  source: string
  model: string
  messages: readonly Json[]
  tools: ToolDefinition[]
  notes?: string[]
}): Conversation {
  const notes = parts.notes ?? []
  const { system, messages } = fromOpenAIMessages(parts.messages, notes)
  return {
    id: parts.id,
    source: parts.source,
    model: parts.model,
    system,
    tools: parts.tools,
    segments: [messages],
    notes,
  }
}
