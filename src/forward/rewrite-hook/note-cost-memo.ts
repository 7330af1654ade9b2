import type { ChatAdapter } from '../../providers/adapter-contract.ts'
import type { TokenEstimator } from '../../rewrite/estimate.ts'
import type { Json } from '../../util/json.ts'
import { sameJson } from '../../util/same-json.ts'

/**
 * The system note's measured cost (pipeline-input.ts systemNoteTokens) for the last request of a
 * conversation: measured on the request cut to its first message, it is the same for every later
 * request whose fields besides `messages`, and first message, are the same. Kept only for adapters
 * whose cut keeps nothing but `messages[0]` (`noteCostFromFirstMessage`); keyed on that message,
 * which the parse memo hands back as the same object while the conversation goes on, or, when it is
 * too short for the parse memo to share, on its JSON text.
 */
interface NoteCost {
  readonly adapter: ChatAdapter
  readonly estimator: TokenEstimator
  readonly note: string
  readonly at: string
  /** Whether the probe dropped messages after the first (it does when there are any). */
  readonly cut: boolean
  /** The body's members other than `messages`, in order. */
  readonly others: readonly (readonly [string, unknown])[]
  readonly tokens: number
}

const known = new WeakMap<object, NoteCost>()
/** First messages below this length come back from each parse as a new object: their text is the key. */
const textKeyMaxChars = 1024
/** Text keys kept; the oldest goes first. */
const textKeysKept = 512
const knownByText = new Map<string, NoteCost>()

export interface NoteCostKey {
  readonly adapter: ChatAdapter
  readonly estimator: TokenEstimator
  readonly note: string
  readonly at: string
  readonly body: Json
}

/** The note's cost measured on an earlier request with the same key, or `measure()` (remembered when it can be). */
export function noteCostOnce(key: NoteCostKey, measure: () => number): number {
  const messages = key.body['messages']
  const first = Array.isArray(messages) ? (messages[0] as unknown) : undefined
  if (key.adapter.noteCostFromFirstMessage !== true || typeof first !== 'object' || first === null) return measure()
  const cut = (messages as unknown[]).length > 1
  const text = Object.isFrozen(first) ? undefined : JSON.stringify(first)
  if (text !== undefined && text.length > textKeyMaxChars) return measure()
  const entry = text === undefined ? known.get(first) : knownByText.get(text)
  if (entry !== undefined && matches(entry, key, cut)) return entry.tokens
  const tokens = measure()
  const others = Object.entries(key.body).filter(([name]) => name !== 'messages')
  const kept = { adapter: key.adapter, estimator: key.estimator, note: key.note, at: key.at, cut, others, tokens }
  if (text === undefined) known.set(first, kept)
  else rememberByText(text, kept)
  return tokens
}

function rememberByText(text: string, kept: NoteCost): void {
  knownByText.delete(text)
  knownByText.set(text, kept)
  if (knownByText.size > textKeysKept) knownByText.delete(knownByText.keys().next().value as string)
}

function matches(entry: NoteCost, key: NoteCostKey, cut: boolean): boolean {
  if (entry.adapter !== key.adapter || entry.estimator !== key.estimator || entry.cut !== cut) return false
  if (entry.note !== key.note || entry.at !== key.at) return false
  let index = 0
  for (const name in key.body) {
    if (name === 'messages') continue
    const other = entry.others[index++]
    if (other === undefined || other[0] !== name || !sameJson(other[1], key.body[name])) return false
  }
  return index === entry.others.length
}
