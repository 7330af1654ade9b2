import { appendMessage, type Block, type Message } from '../conversation.ts'

/**
 * Keeps only tool calls answered in the next message and results answering the call before them,
 * as both APIs require (a run stopped mid-call leaves a call with no result).
 */
export function pairToolCalls(messages: readonly Message[]): { messages: Message[]; dropped: number } {
  let dropped = 0
  const kept: Message[] = []
  messages.forEach((message, index) => {
    const neighbour = message.role === 'assistant' ? messages[index + 1] : messages[index - 1]
    const partner = new Set(
      (neighbour?.content ?? []).flatMap((block) =>
        message.role === 'assistant'
          ? block.type === 'tool_result'
            ? [block.tool_use_id]
            : []
          : block.type === 'tool_use'
            ? [block.id]
            : [],
      ),
    )
    const content = message.content.filter((block: Block) => {
      const id = block.type === 'tool_use' ? block.id : block.type === 'tool_result' ? block.tool_use_id : undefined
      if (id === undefined || partner.has(id)) return true
      dropped++
      return false
    })
    if (content.length > 0) appendMessage(kept, { role: message.role, content })
    else if (message.role === 'assistant')
      appendMessage(kept, { role: 'assistant', content: [{ type: 'text', text: '(no reply)' }] })
  })
  return { messages: kept, dropped }
}
