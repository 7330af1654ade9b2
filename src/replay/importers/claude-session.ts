import { appendMessage, textBlock, type Block, type Conversation, type Message } from '../conversation.ts'
import { ImportError } from './import-error.ts'
import { attachmentNote } from './attachment-note.ts'
import { standInSystemPrompt, standInTools } from './stand-ins.ts'
import { isSyntheticApiError, syntheticErrorNote } from './synthetic-error.ts'

type Line = Record<string, unknown>

export function looksLikeClaudeSession(first: unknown, lines: readonly unknown[]): boolean {
  return (
    lines.some(
      (line) =>
        typeof line === 'object' && line !== null && 'uuid' in line && 'parentUuid' in line && 'sessionId' in line,
    ) && !(typeof first === 'object' && first !== null && 'session_id' in first)
  )
}

/**
 * A Claude Code session file (~/.claude/projects/PROJECT/SESSION.jsonl). Lines form a tree by
 * `parentUuid`; the conversation is the path from the newest main-chain line back to its root.
 * Sidechains (sub-agents) are skipped. A compaction boundary starts a new root whose
 * `logicalParentUuid` points at the history it replaced; `uncompacted` follows it back.
 */
export function importClaudeSession(
  lines: readonly Line[],
  source: string,
  options: { readonly uncompacted: boolean },
): Conversation {
  const byUuid = new Map<string, Line>()
  for (const line of lines) if (typeof line['uuid'] === 'string') byUuid.set(line['uuid'], line)
  const leaf = lines.findLast(
    (line) =>
      (line['type'] === 'user' || line['type'] === 'assistant') &&
      line['isSidechain'] !== true &&
      typeof line['uuid'] === 'string',
  )
  if (!leaf) throw new ImportError(source, 'no main-chain user or assistant line found')

  // Walk from the leaf to the root, crossing compaction boundaries; each boundary closes a segment.
  const pathSegments: Line[][] = [[]]
  let compactions = 0
  const seen = new Set<string>()
  for (let current: Line | undefined = leaf; current;) {
    const uuid = String(current['uuid'])
    if (seen.has(uuid)) throw new ImportError(source, `parentUuid cycle at ${uuid}`)
    seen.add(uuid)
    if (current['type'] === 'system' && current['subtype'] === 'compact_boundary') {
      compactions++
      pathSegments.push([])
      current = byUuid.get(String(current['logicalParentUuid'] ?? ''))
      continue
    }
    pathSegments.at(-1)?.push(current)
    const parent = current['parentUuid']
    current = typeof parent === 'string' ? byUuid.get(parent) : undefined
  }
  const ordered = pathSegments.toReversed().map((segment) => segment.toReversed())
  const synthetic = ordered.flat().filter(isSyntheticApiError).length
  const kept = ordered.map((segment) => segment.filter((line) => !isSyntheticApiError(line)))
  const lineSegments = options.uncompacted ? [kept.flat().filter((line) => line['isCompactSummary'] !== true)] : kept

  const toolNames = new Set<string>()
  let model = 'claude-sonnet-4-5'
  const segments = lineSegments.map((segmentLines) => {
    const built = messagesOf(segmentLines, toolNames)
    model = built.model ?? model
    return built.messages
  })
  const firstPrompt = segments[0]?.[0]?.content.find((block) => block.type === 'text')
  const notes = [
    'system prompt and tool schemas are stand-ins (session files hold neither)',
    ...attachmentNote(firstPrompt?.type === 'text' ? firstPrompt.text : ''),
  ]
  if (compactions > 0)
    notes.push(
      `${compactions} compaction(s) ${options.uncompacted ? 'undone: history kept, summary dropped' : 'followed as recorded'}`,
    )
  if (synthetic > 0) notes.push(syntheticErrorNote(synthetic))
  return {
    id: String(leaf['sessionId'] ?? source),
    source,
    model,
    system: standInSystemPrompt('Claude Code'),
    tools: standInTools([...toolNames]),
    segments: segments.filter((segment) => segment.length > 0),
    notes,
  }
}

function messagesOf(
  segmentLines: readonly Line[],
  toolNames: Set<string>,
): { messages: Message[]; model: string | undefined } {
  const messages: Message[] = []
  let model: string | undefined
  let lastAssistantId: string | undefined
  for (const line of segmentLines) {
    const message = line['message'] as Line | undefined
    if (!message || (line['type'] !== 'user' && line['type'] !== 'assistant')) continue
    const content =
      typeof message['content'] === 'string'
        ? [textBlock(message['content'])]
        : ((message['content'] as Block[] | undefined) ?? [])
    if (line['type'] === 'assistant') {
      if (typeof message['model'] === 'string' && message['model'] !== '<synthetic>') model = message['model']
      for (const block of content) if (block.type === 'tool_use') toolNames.add(block.name)
      const id = String(message['id'] ?? '')
      // Lines of one reply share its message id; a different id right after means the first reply was retried.
      if (lastAssistantId !== undefined && id !== lastAssistantId && messages.at(-1)?.role === 'assistant')
        messages[messages.length - 1] = { role: 'assistant', content: [] }
      lastAssistantId = id
      appendToLast(messages, 'assistant', content)
    } else {
      lastAssistantId = undefined
      appendMessage(messages, { role: 'user', content })
    }
  }
  return { messages: messages.filter((entry) => entry.content.length > 0), model }
}

function appendToLast(messages: Message[], role: Message['role'], content: readonly Block[]): void {
  const last = messages.at(-1)
  if (last && last.role === role) messages[messages.length - 1] = { role, content: [...last.content, ...content] }
  else messages.push({ role, content: [...content] })
}
