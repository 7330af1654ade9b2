import type { Conversation, Message } from '../../src/replay/conversation.ts'

/** Small recorded conversations for the replay's quality measures: a Read call, its result, the whole run. */
export const read = (id: string, path: string): Message => ({
  role: 'assistant',
  content: [{ type: 'tool_use', id, name: 'Read', input: { file_path: path } }],
})

export const result = (id: string, text: string): Message => ({
  role: 'user',
  content: [{ type: 'tool_result', tool_use_id: id, content: text }],
})

export const conversationOf = (messages: Message[], system: string): Conversation => ({
  id: 'c',
  source: 'test',
  model: 'claude-test',
  system,
  tools: [],
  segments: [messages],
  notes: [],
})
