/**
 * A hindsight lower bound on needed-but-hidden events (docs/quality.md, "The bound"): for each
 * request, the fewest events any edit policy that keeps or removes whole blocks could give while
 * fitting the room, if it knew what the agent's next message quotes. Nothing carries over between
 * requests (a real policy's edits are frozen, and it cannot see the future), so no clearing order,
 * fold or drop can do better: a measured gap to it is what an ordering could still win.
 *
 * Mandatory (no policy may remove them): the system prompt and tools, the first message, the
 * newest message, and the calls its tool results answer, counted as the fake upstream counts that
 * request. Every other text or tool-result block may go, at no cost (its text alone counted when
 * kept), so the bound never asks more room than a real request would take.
 */
import { promptBlocks } from '../../mock/anthropic-messages.ts'
import { countTextTokens } from '../../mock/token-count.ts'
import type { Block, Conversation, Message } from '../conversation.ts'
import { neededStrings } from './at-risk.ts'
import { allText, resultText } from './message-strings.ts'

/** A removable block showing some of the needed strings (by their index in `open`). */
export interface Carrier {
  readonly tokens: number
  readonly text: string
  readonly shows: ReadonlySet<number>
}

/** One request as the bound sees it. */
export interface BoundRequest {
  /** 1-based, as the replay numbers requests. */
  readonly index: number
  readonly mandatoryTokens: number
  /** Needed strings the mandatory part does not show: only removable blocks can. */
  readonly open: readonly string[]
  readonly carriers: readonly Carrier[]
}

export interface HindsightBound {
  /** Requests whose mandatory part fits the room. */
  readonly sent: number
  /** Requests no policy can send: the mandatory part alone is over the room. */
  readonly refused: number
  readonly events: number
  /** Fewest events per request (undefined: no policy can send it), in replay order. */
  readonly perRequest: readonly (number | undefined)[]
}

/** The bound over a conversation at `room` tokens (the budget: ctxgate's default is 0.9 of the window). */
export function hindsightBound(conversation: Conversation, room: number): HindsightBound {
  let sent = 0
  let refused = 0
  let events = 0
  const perRequest: (number | undefined)[] = []
  for (const request of boundRequests(conversation)) {
    if (request.mandatoryTokens > room) {
      refused++
      perRequest.push(undefined)
      continue
    }
    sent++
    const fewest = fewestHidden(request, room)
    events += fewest
    perRequest.push(fewest)
  }
  return { sent, refused, events, perRequest }
}

/** Each request's mandatory size, the needed strings it leaves open, and the blocks that could show them. */
export function boundRequests(conversation: Conversation): BoundRequest[] {
  const needs = neededStrings(conversation)
  const requests: BoundRequest[] = []
  for (const messages of conversation.segments)
    messages.forEach((message, position) => {
      if (message.role !== 'assistant' || position === 0) return
      const index = requests.length + 1
      const needed = needs[index - 1]?.needed.map((entry) => entry.text) ?? []
      const history = messages.slice(0, position)
      const fixed = mandatoryPositions(history)
      const fixedText = [...fixed].map((at) => allText(history[at]?.content)).join('\n')
      const mandatoryTokens = upstreamCount(
        conversation,
        [...fixed].map((at) => history[at] as Message),
      )
      const open = needed.filter((text) => !fixedText.includes(text))
      const carriers: Carrier[] = []
      if (open.length > 0)
        history.forEach((entry, at) => {
          if (fixed.has(at)) return
          for (const block of entry.content) {
            const text = blockText(block)
            const shows = new Set(open.flatMap((string, which) => (text.includes(string) ? [which] : [])))
            if (shows.size > 0) carriers.push({ tokens: countTextTokens(text), text, shows })
          }
        })
      requests.push({ index, mandatoryTokens, open, carriers })
    })
  return requests
}

/** The fake upstream's count of a request of these messages alone, with the conversation's system prompt and tools. */
export function upstreamCount(conversation: Conversation, messages: readonly Message[]): number {
  const request = {
    model: conversation.model,
    ...(conversation.system ? { system: [{ type: 'text', text: conversation.system }] } : {}),
    ...(conversation.tools.length > 0 ? { tools: conversation.tools } : {}),
    messages,
  }
  return requestFraming + promptBlocks(request as never).reduce((sum, block) => sum + block.tokens, 0)
}

/** What the fake upstream adds once per request (src/mock/anthropic-messages.ts). */
const requestFraming = 8

/** The first message, the newest, and the call message its tool results answer (each once). */
function mandatoryPositions(history: readonly Message[]): Set<number> {
  const fixed = new Set<number>([0])
  const last = history.length - 1
  if (last < 1) return fixed
  fixed.add(last)
  const answersCalls = history[last]?.content.some((block) => block.type === 'tool_result') === true
  if (answersCalls && last - 1 >= 1) fixed.add(last - 1)
  return fixed
}

function blockText(block: Block): string {
  return block.type === 'tool_result' ? resultText(block) : block.type === 'text' ? block.text : ''
}

/** Up to this many carriers every subset is tried; beyond, the fractional relaxation bounds it. */
const exactUpTo = 16

/** The fewest open strings left unshown by blocks fitting beside the mandatory part (never more than any such choice leaves). */
export function fewestHidden(request: BoundRequest, room: number): number {
  const capacity = room - request.mandatoryTokens
  return request.open.length - Math.min(request.open.length, mostShown(request.carriers, capacity))
}

function mostShown(carriers: readonly Carrier[], capacity: number): number {
  if (capacity < 0) return 0
  if (carriers.length <= exactUpTo) {
    let best = 0
    for (let mask = 0; mask < 1 << carriers.length; mask++) {
      let tokens = 0
      const shown = new Set<number>()
      carriers.forEach((carrier, index) => {
        if (!(mask & (1 << index))) return
        tokens += carrier.tokens
        for (const string of carrier.shows) shown.add(string)
      })
      if (tokens <= capacity) best = Math.max(best, shown.size)
    }
    return best
  }
  // Fractional knapsack, a string counted once per carrier showing it: never below the best whole choice.
  let left = capacity
  let shown = 0
  for (const carrier of carriers.toSorted((a, b) => b.shows.size / b.tokens - a.shows.size / a.tokens)) {
    if (left <= 0) break
    const take = carrier.tokens === 0 ? 1 : Math.min(1, left / carrier.tokens)
    shown += carrier.shows.size * take
    left -= carrier.tokens * take
  }
  return Math.floor(shown)
}
