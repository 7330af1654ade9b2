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

/** The client's first shell-like tool, unless it forbade tool use for this request. */
function shellToolOf(request: Json): ShellTool | undefined {
  if ((request['tool_choice'] as Json | undefined)?.['type'] === 'none') return undefined
  for (const tool of (request['tools'] as Json[] | undefined) ?? []) {
    if (typeof tool['name'] !== 'string' || (tool['type'] !== undefined && tool['type'] !== 'custom')) continue
    const found = shellToolFrom(tool['name'], tool['input_schema'])
    if (found) return found
  }
  return undefined
}

function blocksOf(message: Json): Json[] {
  const content = message['content']
  return typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? content : []
}

function textOf(blocks: readonly Json[]): string {
  return blocks.map((block) => (block['type'] === 'text' ? String(block['text'] ?? '') : '')).join('\n')
}

function systemText(request: Json): string {
  const system = request['system']
  return typeof system === 'string' ? system : Array.isArray(system) ? textOf(system as Json[]) : ''
}

/**
 * The content of the agent loop's next reply to a Messages request, or undefined when the request
 * neither offers a shell-like tool nor asks for a summary (then the mock answers as usual).
 */
export function anthropicAgentContent(
  request: Json,
  steps: number,
  sequence: number,
  rereadEvery = 0,
): Json[] | undefined {
  const tool = shellToolOf(request)
  const messages = (request['messages'] as Json[]).map(blocksOf)
  const lastUser = messages.length > 0 ? textOf(messages[messages.length - 1] as Json[]) : ''
  const summaryRequested = isSummaryRequest(lastUser) || isSummaryRequest(systemText(request))
  if (!tool && !summaryRequested) return undefined
  const results = (blocks: Json[]) => blocks.filter((block) => block['type'] === 'tool_result')
  let done = countStepsDone(
    messages.map((blocks) => ({
      toolResults: results(blocks).length,
      text: textOf(blocks),
      resultIds: results(blocks).map((block) => String(block['tool_use_id'])),
    })),
  )
  if (summaryRequested) done = Math.max(done, newestNarratedStep(messages.map(textOf).join('\n')))
  const reply = planAgentReply(steps, done, summaryRequested, rereadEvery)
  if (reply.kind !== 'tool' || !tool)
    return [{ type: 'text', text: reply.kind === 'tool' ? reply.narration : reply.text }]
  return [
    { type: 'text', text: reply.narration },
    {
      type: 'tool_use',
      id: mockCallId('toolu', reply.step, sequence),
      name: tool.name,
      input: tool.argumentsFor(reply.command, reply.description),
    },
  ]
}
