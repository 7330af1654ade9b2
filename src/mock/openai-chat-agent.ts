import {
  countStepsDone,
  isSummaryRequest,
  mockCallId,
  newestNarratedStep,
  planAgentReply,
  shellToolFrom,
  type ShellTool,
} from './agent-loop.ts'

type Json = Record<string, unknown>

/** What the mock says next on the Chat route: text, a function call, or both. */
export interface ChatReply {
  readonly text: string | null
  readonly toolCall?: { readonly id: string; readonly name: string; readonly arguments: string }
}

/** The client's first shell-like function, unless it forbade tool calls for this request. */
function shellToolOf(request: Json): ShellTool | undefined {
  if (request['tool_choice'] === 'none') return undefined
  for (const tool of (request['tools'] as Json[] | undefined) ?? []) {
    const definition = tool['function'] as Json | undefined
    if (tool['type'] !== 'function' || typeof definition?.['name'] !== 'string') continue
    const found = shellToolFrom(definition['name'], definition['parameters'])
    if (found) return found
  }
  return undefined
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return (content as Json[]).map((part) => (typeof part['text'] === 'string' ? part['text'] : '')).join('\n')
}

/**
 * The agent loop's next reply to a Chat Completions request, or undefined when the request neither
 * offers a shell-like function nor asks for a summary (then the mock answers as usual).
 */
export function openaiChatAgentReply(
  request: Json,
  steps: number,
  sequence: number,
  rereadEvery = 0,
): ChatReply | undefined {
  const tool = shellToolOf(request)
  const messages = request['messages'] as Json[]
  const last = messages[messages.length - 1]
  const system = messages
    .filter((message) => message['role'] === 'system' || message['role'] === 'developer')
    .map((message) => textOf(message['content']))
    .join('\n')
  const asked = last?.['role'] === 'user' && isSummaryRequest(textOf(last['content']))
  const summaryRequested = asked || isSummaryRequest(system)
  if (!tool && !summaryRequested) return undefined
  let done = countStepsDone(
    messages.map((message) => ({
      toolResults: message['role'] === 'tool' ? 1 : 0,
      text: textOf(message['content']),
      resultIds: message['role'] === 'tool' ? [String(message['tool_call_id'])] : [],
    })),
  )
  if (summaryRequested)
    done = Math.max(done, newestNarratedStep(messages.map((message) => textOf(message['content'])).join('\n')))
  const reply = planAgentReply(steps, done, summaryRequested, rereadEvery)
  if (reply.kind !== 'tool' || !tool) return { text: reply.kind === 'tool' ? reply.narration : reply.text }
  return {
    text: reply.narration,
    toolCall: {
      id: mockCallId('call', reply.step, sequence),
      name: tool.name,
      arguments: JSON.stringify(tool.argumentsFor(reply.command, reply.description)),
    },
  }
}
