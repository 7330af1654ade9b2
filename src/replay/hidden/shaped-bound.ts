/**
 * The hindsight bound of bound.ts, held to the edits ctxgate can make (docs/quality.md, "The bound
 * with ctxgate's edits"): a tool result may go (its note counted as nothing), and so may the
 * messages from the second up to some message (a dropped prefix), but the agent's own text and
 * tool calls of every message kept stay: ctxgate never removes them. Since round 10 ctxgate clears
 * the long strings of old tool inputs (cleared-input.ts), so with `clearInputs` (the default) those
 * strings of every call but the newest message's count as nothing too. For each request, the fewest
 * events over every prefix cut, with the oracle choosing the results to keep. Still a lower bound
 * on what any ctxgate policy can give (notes cost nothing here, any cut point is allowed), and
 * never below bound.ts's, which may remove any block.
 */
import { countTextTokens } from '../../mock/token-count.ts'
import { minClearedChars } from '../../rewrite/cleared-input.ts'
import type { Conversation, Message } from '../conversation.ts'
import { neededStrings } from './at-risk.ts'
import { fewestHidden, upstreamCount, type Carrier, type HindsightBound } from './bound.ts'
import { allText, resultText } from './message-strings.ts'

export interface ShapedOptions {
  /** Old tool inputs' long strings may go (round 10's edit); false: the bound as it was before it. Default true. */
  readonly clearInputs?: boolean
}

export function shapedBound(conversation: Conversation, room: number, options: ShapedOptions = {}): HindsightBound {
  const clearInputs = options.clearInputs !== false
  const needs = neededStrings(conversation)
  let sent = 0
  let refused = 0
  let events = 0
  const perRequest: (number | undefined)[] = []
  let index = 0
  for (const messages of conversation.segments)
    messages.forEach((message, position) => {
      if (message.role !== 'assistant' || position === 0) return
      const needed = needs[index]?.needed.map((entry) => entry.text) ?? []
      index++
      const fewest = fewestOverCuts(conversation, messages.slice(0, position), needed, room, clearInputs)
      perRequest.push(fewest)
      if (fewest === undefined) refused++
      else {
        sent++
        events += fewest
      }
    })
  return { sent, refused, events, perRequest }
}

/** The fewest needed strings left unshown over every prefix cut; undefined when no cut fits the room. */
function fewestOverCuts(
  conversation: Conversation,
  history: readonly Message[],
  needed: readonly string[],
  room: number,
  clearInputs: boolean,
): number | undefined {
  const newest = history.length - 1
  const always = [history[0] as Message, ...(newest > 0 ? [history[newest] as Message] : [])]
  // Message 0 and the newest stay whole; every other message keeps its text and calls.
  const base = upstreamCount(conversation, always)
  const fixedTokens = history.map((message, at) =>
    // The newest round's calls stay whole too: ctxgate keeps at least that round, and the free bound holds them mandatory.
    at === 0 || at === newest ? 0 : fixedTokensOf(conversation, message, clearInputs && at < newest - 1),
  )
  const alwaysText = allText(always.map((message) => message.content))
  // For each needed string, the newest kept-for-sure message (text or calls) showing it: a cut past it hides it.
  const shownUpTo = needed.map((text) => {
    if (alwaysText.includes(text)) return Number.POSITIVE_INFINITY
    for (let at = newest - 1; at >= 1; at--) if (fixedTextOf(history[at] as Message).includes(text)) return at
    return -1
  })
  const results: { at: number; tokens: number; text: string; shows: number[] }[] = []
  for (let at = 1; at < newest; at++)
    for (const block of history[at]?.content ?? []) {
      if (block.type !== 'tool_result') continue
      const text = resultText(block)
      const shows = needed.flatMap((string, which) => (text.includes(string) ? [which] : []))
      if (shows.length > 0) results.push({ at, tokens: countTextTokens(text), text, shows })
    }
  let mandatoryTokens = base + fixedTokens.slice(1, Math.max(1, newest)).reduce((sum, tokens) => sum + tokens, 0)
  // The newest message's tool results keep the calls they answer (pairing): no cut passes that message.
  const answersCalls = history[newest]?.content.some((block) => block.type === 'tool_result') === true
  const lastCut = Math.max(1, answersCalls ? newest - 1 : newest)
  let best: number | undefined
  // Cut c keeps message 0 and messages c..newest (c = 1: nothing dropped).
  for (let cut = 1; cut <= lastCut; cut++) {
    if (cut > 1) mandatoryTokens -= fixedTokens[cut - 1] as number
    if (mandatoryTokens > room) continue
    const openIndex = new Map<number, number>()
    needed.forEach((_, which) => {
      if ((shownUpTo[which] as number) < cut) openIndex.set(which, openIndex.size)
    })
    if (openIndex.size === 0) return 0
    const carriers: Carrier[] = []
    for (const result of results) {
      if (result.at < cut) continue
      const shows = new Set(
        result.shows.flatMap((which) => (openIndex.has(which) ? [openIndex.get(which) as number] : [])),
      )
      if (shows.size > 0) carriers.push({ tokens: result.tokens, text: result.text, shows })
    }
    const open = [...openIndex.keys()].map((which) => needed[which] as string)
    const fewest = fewestHidden({ index: 0, mandatoryTokens, open, carriers }, room)
    best = best === undefined ? fewest : Math.min(best, fewest)
    if (best === 0) return 0
  }
  return best
}

/** A message's text and calls, which a policy must keep with it (its tool results may go, to a note counted as nothing). */
function withoutResults(message: Message, clearInputs = false): Message {
  const content = message.content.filter((block) => block.type !== 'tool_result')
  return {
    role: message.role,
    content: clearInputs
      ? content.map((block) =>
          block.type === 'tool_use' ? { ...block, input: withoutLongStrings(block.input) } : block,
        )
      : content,
  }
}

/** The input with the strings ctxgate clears emptied (their note counted as nothing, as a cleared result's is). */
function withoutLongStrings(value: unknown): unknown {
  if (typeof value === 'string') return value.length >= minClearedChars ? '' : value
  if (Array.isArray(value)) return value.map(withoutLongStrings)
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withoutLongStrings(item)]))
}

const fixedTokensByMessage = [new WeakMap<Message, number>(), new WeakMap<Message, number>()]
const fixedTextByMessage = new WeakMap<Message, string>()

/** What the message adds to a request without its tool results (and, with `clearInputs`, its long input strings), as the fake upstream counts it. */
function fixedTokensOf(conversation: Conversation, message: Message, clearInputs: boolean): number {
  const known = fixedTokensByMessage[clearInputs ? 1 : 0] as WeakMap<Message, number>
  let tokens = known.get(message)
  if (tokens === undefined) {
    tokens = upstreamCount(conversation, [withoutResults(message, clearInputs)]) - upstreamCount(conversation, [])
    known.set(message, tokens)
  }
  return tokens
}

function fixedTextOf(message: Message): string {
  let text = fixedTextByMessage.get(message)
  if (text === undefined) {
    text = allText(withoutResults(message).content)
    fixedTextByMessage.set(message, text)
  }
  return text
}
