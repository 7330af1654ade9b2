import { conversationFormat, type Conversation, type Message } from '../conversation.ts'
import { ImportError } from './import-error.ts'

export function looksLikeCtxgateJsonl(first: unknown): boolean {
  return isRecord(first) && first['type'] === 'conversation' && first['format'] === conversationFormat
}

export function importCtxgateJsonl(lines: readonly unknown[], source: string): Conversation[] {
  const conversations: Conversation[] = []
  let header: Record<string, unknown> | undefined
  let segments: Message[][] = [[]]
  const flush = (): void => {
    if (!header) return
    conversations.push({
      id: String(header['id'] ?? source),
      source: String(header['source'] ?? source),
      model: String(header['model'] ?? 'claude-sonnet-4-5'),
      system: String(header['system'] ?? ''),
      tools: (header['tools'] as Conversation['tools'] | undefined) ?? [],
      segments: segments.filter((segment) => segment.length > 0),
      notes: (header['notes'] as string[] | undefined) ?? [],
      ...(header['recordedUsage']
        ? { recordedUsage: header['recordedUsage'] as Conversation['recordedUsage'] & object }
        : {}),
    })
    segments = [[]]
  }
  lines.forEach((line, index) => {
    if (!isRecord(line)) throw new ImportError(source, `line ${index + 1} is not a JSON object`)
    if (line['type'] === 'conversation') {
      flush()
      header = line
    } else if (line['type'] === 'message') {
      if (line['role'] !== 'user' && line['role'] !== 'assistant')
        throw new ImportError(source, `line ${index + 1}: role must be user or assistant`)
      if (!Array.isArray(line['content']))
        throw new ImportError(source, `line ${index + 1}: content must be a list of blocks`)
      segments.at(-1)?.push({ role: line['role'], content: line['content'] as Message['content'] })
    } else if (line['type'] === 'compaction') {
      segments.push([])
    } else throw new ImportError(source, `line ${index + 1}: unknown line type ${JSON.stringify(line['type'])}`)
  })
  flush()
  return conversations
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
