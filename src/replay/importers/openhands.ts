import type { Conversation } from '../conversation.ts'
import { conversationFromOpenAI, fromOpenAITools } from './openai-messages.ts'

type Json = Record<string, unknown>

export function looksLikeOpenHands(first: unknown): boolean {
  return typeof first === 'object' && first !== null && Array.isArray((first as Json)['history'])
}

/**
 * One OpenHands evaluation run: history[0] carries the system prompt and tool schemas; actions with
 * a raw model response are the assistant turns (grouped by response id); observations answering a
 * tool call id are the tool messages.
 */
export function importOpenHandsRun(run: Json, source: string): Conversation {
  const history = (run['history'] as Json[] | undefined) ?? []
  const head = history[0]?.['args'] as Json | undefined
  const messages: Json[] = [{ role: 'system', content: String(head?.['content'] ?? '') }]
  const seenResponses = new Set<string>()
  let model = 'unknown'
  for (const event of history.slice(1)) {
    const metadata = event['tool_call_metadata'] as Json | undefined
    if (event['source'] === 'user' && event['action'] === 'message') {
      messages.push({
        role: 'user',
        content: String((event['args'] as Json | undefined)?.['content'] ?? event['message'] ?? ''),
      })
      continue
    }
    if (!metadata) continue
    if (event['observation'] !== undefined && metadata['tool_call_id'] !== undefined) {
      messages.push({
        role: 'tool',
        tool_call_id: String(metadata['tool_call_id']),
        content: String(event['content'] ?? ''),
      })
      continue
    }
    const response = metadata['model_response'] as Json | undefined
    if (event['action'] !== undefined && response) {
      const id = String(response['id'] ?? '')
      if (seenResponses.has(id)) continue
      seenResponses.add(id)
      if (typeof response['model'] === 'string') model = response['model']
      const choice = ((response['choices'] as Json[] | undefined) ?? [])[0]
      const message = (choice?.['message'] as Json | undefined) ?? {}
      messages.push({ role: 'assistant', content: message['content'] ?? null, tool_calls: message['tool_calls'] })
    }
  }
  return conversationFromOpenAI({
    id: String(run['instance_id'] ?? source),
    source,
    model,
    messages,
    tools: fromOpenAITools((head?.['tools'] as Json[] | undefined) ?? []),
    notes: ['OpenHands history: assistant turns from raw model responses, tool messages from observations'],
  })
}
