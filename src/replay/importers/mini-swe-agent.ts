import type { Conversation } from '../conversation.ts'
import { bashTool, conversationFromOpenAI, textOf } from './openai-messages.ts'
import { appendMessage, textBlock, type Message } from '../conversation.ts'

type Json = Record<string, unknown>

/** `{messages: [{role, content}, …]}`, each message an OpenAI chat message. */
export function looksLikeMiniSweAgent(document: unknown): boolean {
  if (typeof document !== 'object' || document === null) return false
  const messages = (document as Json)['messages']
  return (
    Array.isArray(messages) &&
    messages.length > 0 &&
    (messages as unknown[]).every(
      (message) => typeof message === 'object' && message !== null && typeof (message as Json)['role'] === 'string',
    )
  )
}

/**
 * mini-swe-agent trajectories: v2 keeps the exact OpenAI list with `tool_calls`; v1 has bash blocks in
 * assistant text and outputs as user messages, so it becomes a text-only conversation.
 */
export function importMiniSweAgent(document: Json, source: string): Conversation {
  const raw = document['messages'] as Json[]
  const id = String(document['instance_id'] ?? source)
  const model = modelOf(document) ?? 'claude-sonnet-4-5'
  const usesTools = raw.some(
    (message) => Array.isArray(message['tool_calls']) && (message['tool_calls'] as unknown[]).length > 0,
  )
  // Drop the agent's bookkeeping (`extra`, provider fields) so only what went over the wire remains.
  const messages = raw.map(({ role, content, tool_calls, tool_call_id }) => ({
    role,
    content,
    tool_calls,
    tool_call_id,
  }))
  if (usesTools)
    return conversationFromOpenAI({
      id,
      source,
      model,
      messages,
      tools: [bashTool],
      notes: ['mini-swe-agent v2: exact OpenAI message list'],
    })
  return importTextTrajectory(messages, {
    id,
    source,
    model,
    notes: ['mini-swe-agent v1: text-only turns (actions in bash blocks); only whole-turn edits apply'],
  })
}

/** Text-only trajectories: assistant text and user observations, no tool blocks. */
export function importTextTrajectory(
  raw: readonly Json[],
  meta: { id: string; source: string; model: string; notes: string[] },
): Conversation {
  const systemParts: string[] = []
  const messages: Message[] = []
  for (const message of raw) {
    const text = textOf(message['content'])
    if (message['role'] === 'system' && messages.length === 0) systemParts.push(text)
    else if ((message['role'] === 'user' || message['role'] === 'assistant') && text)
      appendMessage(messages, { role: message['role'], content: [textBlock(text)] })
  }
  return { ...meta, system: systemParts.join('\n\n'), tools: [], segments: [messages] }
}

function modelOf(document: Json): string | undefined {
  const info = document['info'] as Json | undefined
  const config = info?.['config'] as Json | undefined
  const model = config?.['model'] as Json | undefined
  const name = model?.['model_name']
  return typeof name === 'string' ? name : undefined
}
