/**
 * The strings of messages and request bodies, flattened for searching: what the agent wrote (its
 * text and every string in its tool inputs), what tools returned, and everything in a request.
 */
import type { Block, Message } from '../conversation.ts'
import type { MessageString } from '../../rewrite/distinctive.ts'

/** The agent's text and every string in its tool inputs, each with where it was. */
export function agentStrings(message: Message): MessageString[] {
  const strings: MessageString[] = []
  for (const block of message.content) {
    if (block.type === 'text') strings.push({ text: block.text, where: 'text', toolInput: false })
    else if (block.type === 'tool_use')
      for (const [field, text] of stringsOf(block.input, ''))
        strings.push({ text, where: field === '' ? block.name : `${block.name}.${field}`, toolInput: true })
  }
  return strings
}

/** Every string value under `value`, with the dotted name of the field that holds it (array positions left out). */
export function stringsOf(value: unknown, field: string): [string, string][] {
  if (typeof value === 'string') return [[field, value]]
  if (Array.isArray(value)) return value.flatMap((item) => stringsOf(item, field))
  if (typeof value === 'object' && value !== null)
    return Object.entries(value).flatMap(([key, inner]) => stringsOf(inner, field === '' ? key : `${field}.${key}`))
  return []
}

/** All text of a tool result's content (nested blocks included). */
export function resultText(block: Extract<Block, { type: 'tool_result' }>): string {
  if (typeof block.content === 'string') return block.content
  return block.content
    .map((inner) => (inner.type === 'text' ? inner.text : inner.type === 'tool_result' ? resultText(inner) : ''))
    .join('\n')
}

/** Every string anywhere in a value, joined by newlines: a request as sent, searched for what it still shows. */
export function allText(value: unknown): string {
  const parts: string[] = []
  const walk = (inner: unknown): void => {
    if (typeof inner === 'string') parts.push(inner)
    else if (Array.isArray(inner)) for (const item of inner) walk(item)
    else if (typeof inner === 'object' && inner !== null) for (const item of Object.values(inner)) walk(item)
  }
  walk(value)
  return parts.join('\n')
}
