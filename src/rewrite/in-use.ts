/**
 * Which tool results the agent is using now (docs/quality.md, "In use"): those holding a
 * distinctive string (a path, an identifier with `_` or camelCase, a hex id, a long number, a
 * quoted string: distinctive.ts) that the tool inputs of its newest few messages quote. Replay
 * shows an agent that has just quoted a read goes on quoting it (issue-398 quotes one design
 * document in 12 of its 27 requests), so when edits are forced such results go last.
 */
import { distinctiveStrings, inputStrings } from './distinctive.ts'
import { hashText } from './hash.ts'
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
    for (const index of quoting)
      for (const holders of holdersOf(messages[index] as MessageView, index, before)) {
        if (holders.length > maxHolders) continue
        for (const id of holders) {
          since.set(id, index)
          if (index === newest && holders.length === 1) byNewest.set(id, (byNewest.get(id) ?? 0) + 1)
        }
      }
  }
  const answer = { since, byNewest }
  answers.set(messages, answer)
  return answer
}

/** The planner asks once per plan pass over the same message list: kept per list, not past it. */
const answers = new WeakMap<readonly MessageView[], InUse>()

/**
 * For each distinctive string the message at `index` quotes, the results before it holding it. The
 * history before a message does not change as the session grows, so the answer is kept per message
 * and the results it was asked over: a message stays among the newest four for several requests.
 */
function holdersOf(message: MessageView, index: number, results: readonly ToolResultView[]): string[][] {
  let count = 0
  while (count < results.length && (results[count] as ToolResultView).message < index) count++
  const last = results[count - 1]
  // The inputs themselves, not the message's hash: an adapter's hash may cover less than they do.
  const inputs = hashText(JSON.stringify(message.toolCallInputs ?? []))
  const cacheKey = `${inputs}:${index}:${count}:${last?.id ?? ''}:${last?.hash ?? ''}:${last?.text.length ?? 0}`
  const cached = holdersByMessage.get(cacheKey)
  if (cached) return cached
  const holders = new Map<number, string[]>()
  for (const key of quotedBy(message)) holders.set(key, [])
  if (holders.size > 0)
    for (const result of results.slice(0, count)) {
      const held = stringsOf(result)
      for (const [key, ids] of holders) if (held.has(key)) ids.push(result.id)
    }
  const answer = [...holders.values()].filter((ids) => ids.length > 0)
  holdersByMessage.set(cacheKey, answer)
  if (holdersByMessage.size > maxMessages) holdersByMessage.delete(holdersByMessage.keys().next().value as string)
  return answer
}

const maxMessages = 2_000
const holdersByMessage = new Map<string, string[][]>()

/** The newest assistant messages that make calls, oldest first. */
function recentCalling(messages: readonly MessageView[]): number[] {
  const found: number[] = []
  for (let index = messages.length - 1; index >= 0 && found.length < recentCallingMessages; index--) {
    const message = messages[index] as MessageView
    if (message.role === 'assistant' && (message.toolCallInputs?.length ?? 0) > 0) found.push(index)
  }
  return found.reverse()
}

/** The distinctive strings of a message's tool inputs, as keys (code lines are quoted.ts's: matched line by line). */
function quotedBy(message: MessageView): Set<number> {
  const strings = (message.toolCallInputs ?? [])
    .flatMap((input) => inputStrings(parsedInput(input)))
    .map((text) => ({ text, where: '', toolInput: false }))
  return new Set(distinctiveStrings(strings).map((found) => keyOf(found.text)))
}

/**
 * The distinctive strings a result holds, as keys, each path also by every shorter tail of two
 * segments or more (`src/app.ts` of `/repo/src/app.ts`: an agent names a file relative or
 * absolute). Once per content: a session's results come back on every request.
 */
function stringsOf(result: ToolResultView): Set<number> {
  const cacheKey = `${result.hash}:${result.text.length}`
  const cached = heldByContent.get(cacheKey)
  if (cached) return cached
  const held = new Set<number>()
  for (const found of distinctiveStrings([{ text: result.text, where: '', toolInput: false }])) {
    held.add(keyOf(found.text))
    if (found.kind !== 'path') continue
    for (let slash = found.text.indexOf('/', 1); slash >= 0; slash = found.text.indexOf('/', slash + 1))
      if (found.text.indexOf('/', slash + 1) > slash + 1) held.add(keyOf(found.text.slice(slash + 1)))
  }
  heldByContent.set(cacheKey, held)
  if (heldByContent.size > maxEntries) heldByContent.delete(heldByContent.keys().next().value as string)
  return held
}

/** Results remembered, the oldest dropped first: small integer keys, so no result text is kept alive by them. */
const maxEntries = 10_000
const heldByContent = new Map<string, Set<number>>()

/** FNV-1a, 30 bits: an integer V8 keeps inline in a Set. A rare collision only reorders clearing. */
function keyOf(text: string): number {
  let hash = 0x811c9dc5
  for (let index = 0; index < text.length; index++) hash = Math.imul(hash ^ text.charCodeAt(index), 0x01000193)
  return hash & 0x3fffffff
}
