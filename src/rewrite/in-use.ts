/**
 * Which tool results the agent is using now (docs/quality.md, "In use"): those holding a
 * distinctive string (a path, an identifier with `_` or camelCase, a hex id, a long number, a
 * quoted string: distinctive.ts) that the tool inputs of its newest few messages quote. Replay
 * shows an agent that has just quoted a read goes on quoting it (issue-398 quotes one design
 * document in 12 of its 27 requests), so when edits are forced such results go last.
 */
import { distinctiveStrings } from './distinctive.ts'
import { inputStrings } from './quoted.ts'
import { parsedInput } from './tool-kind.ts'
import type { MessageView, ToolResultView } from './types.ts'

/** Assistant messages with calls looked back over: the agent's current step and the few before it. */
export const recentCallingMessages = 4

/** A string more results hold (a common import, a shared type) says nothing of which one the agent read it in. */
export const maxHolders = 3

export interface InUse {
  /** Result id → index of the newest recent message quoting a distinctive string it holds; results not in use are absent. */
  readonly since: ReadonlyMap<string, number>
  /** Result id → how many distinctive strings of the newest assistant message (when it calls tools) it alone holds. */
  readonly byNewest: ReadonlyMap<string, number>
}

/** Result id → index of the newest recent message quoting a distinctive string it holds; results not in use are absent. */
export function inUseSince(messages: readonly MessageView[]): ReadonlyMap<string, number> {
  return inUse(messages).since
}

export function inUse(messages: readonly MessageView[]): InUse {
  const known = answers.get(messages)
  if (known) return known
  const since = new Map<string, number>()
  const byNewest = new Map<string, number>()
  const quoting = recentCalling(messages)
  const newest = messages.findLastIndex((message) => message.role === 'assistant')
  if (quoting.length > 0) {
    const before = messages.slice(0, quoting.at(-1)).flatMap((message) => message.toolResults)
    for (const index of quoting) {
      const holdersOf = new Map<string, string[]>()
      for (const text of quotedBy(messages[index] as MessageView)) holdersOf.set(text, [])
      for (const result of before) {
        if (result.message >= index) break
        const held = stringsOf(result)
        for (const [text, holders] of holdersOf) if (held.has(text)) holders.push(result.id)
      }
      for (const holders of holdersOf.values()) {
        if (holders.length > maxHolders) continue
        for (const id of holders) {
          since.set(id, index)
          if (index === newest && holders.length === 1) byNewest.set(id, (byNewest.get(id) ?? 0) + 1)
        }
      }
    }
  }
  const answer = { since, byNewest }
  answers.set(messages, answer)
  return answer
}

/** The planner asks once per plan pass over the same message list: kept per list, not past it. */
const answers = new WeakMap<readonly MessageView[], InUse>()

/** The newest assistant messages that make calls, oldest first. */
function recentCalling(messages: readonly MessageView[]): number[] {
  const found: number[] = []
  for (let index = messages.length - 1; index >= 0 && found.length < recentCallingMessages; index--) {
    const message = messages[index] as MessageView
    if (message.role === 'assistant' && (message.toolCallInputs?.length ?? 0) > 0) found.push(index)
  }
  return found.reverse()
}

/** The distinctive strings of a message's tool inputs (code lines are quoted.ts's: matched line by line). */
function quotedBy(message: MessageView): Set<string> {
  const cached = quotedByHash.get(message.hash)
  if (cached) return cached
  const strings = (message.toolCallInputs ?? [])
    .flatMap((input) => inputStrings(parsedInput(input)))
    .map((text) => ({ text, where: '', toolInput: false }))
  const quoted = new Set(distinctiveStrings(strings).map((found) => found.text))
  remember(quotedByHash, message.hash, quoted)
  return quoted
}

/**
 * The distinctive strings a result holds, each path also by every shorter tail (`src/app.ts` of
 * `/repo/src/app.ts`), since an agent names a file relative or absolute: once per content.
 */
function stringsOf(result: ToolResultView): Set<string> {
  const cached = heldByHash.get(result.hash)
  if (cached) return cached
  const held = new Set<string>()
  for (const found of distinctiveStrings([{ text: result.text, where: '', toolInput: false }])) {
    held.add(found.text)
    if (found.kind !== 'path') continue
    for (let slash = found.text.indexOf('/', 1); slash >= 0; slash = found.text.indexOf('/', slash + 1))
      if (found.text.indexOf('/', slash + 1) > slash + 1) held.add(found.text.slice(slash + 1))
  }
  remember(heldByHash, result.hash, held)
  return held
}

/** Per content hash, across requests (a session's results come back on every request); the oldest go first. */
const maxEntries = 20_000
const quotedByHash = new Map<string, Set<string>>()
const heldByHash = new Map<string, Set<string>>()

function remember(cache: Map<string, Set<string>>, hash: string, value: Set<string>): void {
  cache.set(hash, value)
  if (cache.size > maxEntries) cache.delete(cache.keys().next().value as string)
}
