import { knownSharedWith } from '../util/list-lineage.ts'
import { RecentWalks } from '../util/recent-walks.ts'
import { TextHasher } from './hash.ts'
import type { ChatView, MessageView, RewriteReport } from './types.ts'

/**
 * Why this request's cached prefix will not be read whole: the client rewrote its history, the
 * model changed (caches are per model), ctxgate made a new batch of edits, or the previous
 * request's entry has expired (its TTL ran out between the two).
 */
export type PrefixBreak = 'client_edit' | 'model_changed' | 'ctxgate_batch' | 'ttl_expired'

/** What the previous request left behind for the check: how many messages it had, their signature, the note. */
export interface PreviousPrefix {
  readonly messageCount?: number
  readonly prefixSignature?: string
  readonly noteOn?: boolean
  readonly model?: string
}

export interface PrefixBreakInput {
  readonly previous: PreviousPrefix | undefined
  readonly view: ChatView
  readonly report: RewriteReport
  readonly noteOn: boolean
  /** The previous request's cache entry has expired (the gap exceeded its TTL). */
  readonly expired?: boolean
  /** prefixSignature(view, previous.messageCount), when the caller has it already (prefixSignatures). */
  readonly signatureAtPrevious?: string
}

/**
 * The client rewrote its history (fewer messages, different ones, a result ctxgate had frozen), or
 * ctxgate started a new batch of edits inside what was sent before; undefined when the prefix held.
 */
export function detectPrefixBreak(input: PrefixBreakInput): PrefixBreak | undefined {
  const { previous, view, report, noteOn } = input
  if (!previous || previous.messageCount === undefined) return undefined
  if (
    report.clientEdited ||
    view.messages.length < previous.messageCount ||
    (input.signatureAtPrevious ?? prefixSignature(view, previous.messageCount)) !== previous.prefixSignature
  )
    return 'client_edit'
  if (typeof previous.model === 'string' && previous.model !== view.model) return 'model_changed'
  // An expired entry is written again whatever ctxgate does: a batch made then costs nothing extra.
  if (input.expired === true) return 'ttl_expired'
  if ((report.firstNewEdit >= 0 && report.firstNewEdit < previous.messageCount) || (noteOn && previous.noteOn !== true))
    return 'ctxgate_batch'
  return undefined
}

/** Role and estimated size of each of the first `count` messages: cheap, and changes when their content does. */
export function prefixSignature(view: ChatView, count: number): string {
  return prefixSignatures(view, count, count).whole
}

/** What a recent walk hashed: each message's role and tokens, and the hasher's state after each (two numbers per message, the start first). */
interface KeptWalk {
  /**
   * The last view list found to have this walk's roles and tokens for its first `listShares`
   * messages: a later list noted as starting like it (list-lineage.ts) shares those unread.
   * Moved on to each list a walk is found whole for, so a conversation carried whole from another
   * one's walk (the same history under another id) is not compared message by message every request.
   */
  list: readonly MessageView[]
  listShares: number
  readonly roles: readonly string[]
  readonly tokens: readonly number[]
  readonly states: readonly number[]
}

/** Longer message lists are walked every time. */
const keptMaxMessages = 4096
/** Conversations going on at once whose walks are kept (as the plan's facts keep theirs). */
const recent = new RecentWalks<KeptWalk>(4)

/**
 * The signatures of the first `at` and the first `count` messages (at <= count) in one walk: what the
 * previous request's shape is checked against, and what this request leaves for the next one.
 * `at` is undefined when nothing asks for it. A client re-sends its history, so the hash goes on
 * from a recent walk's state after the first messages whose role and tokens (all that is hashed) it shares.
 */
export function prefixSignatures(
  view: ChatView,
  at: number | undefined,
  count: number,
): { readonly atPrevious: string | undefined; readonly whole: string } {
  const messages = view.messages
  if (count > messages.length || count > keptMaxMessages) return walkedWhole(view, at, count)
  const { from, shared, whole } = recent.longest(
    (kept) => sharedLength(kept, messages, count),
    (_, length) => length === count,
    (kept) => Math.min(kept.roles.length, count),
  )
  const digestAt = (states: readonly number[], index: number | undefined): string | undefined =>
    index === undefined || index > count
      ? undefined
      : TextHasher.resumed(states[2 * index] as number, states[2 * index + 1] as number).digest()
  // The same messages again (a replan, or the previous count's signature): nothing to walk or keep.
  if (whole) {
    const walk = from as KeptWalk
    walk.list = messages
    walk.listShares = count
    return { atPrevious: digestAt(walk.states, at), whole: digestAt(walk.states, count) as string }
  }
  const roles = from ? from.roles.slice(0, shared) : []
  const tokens = from ? from.tokens.slice(0, shared) : []
  const states = from ? from.states.slice(0, 2 * shared + 2) : []
  const hasher = from
    ? TextHasher.resumed(states[2 * shared] as number, states[2 * shared + 1] as number)
    : new TextHasher()
  if (!from) hasher.writeState(states)
  for (let index = shared; index < count; index++) {
    const message = messages[index] as MessageView
    // The text hashed is `${role}:${tokens};` per message, as it always was.
    hasher.add(`${message.role}:${message.tokens};`)
    hasher.writeState(states)
    roles.push(message.role)
    tokens.push(message.tokens)
  }
  recent.keep({ list: messages, listShares: count, roles, tokens, states })
  return { atPrevious: digestAt(states, at), whole: hasher.digest() }
}

/** How many of the first `count` messages have the role and tokens a kept walk hashed. */
function sharedLength(kept: KeptWalk, messages: readonly MessageView[], count: number): number {
  const most = Math.min(kept.roles.length, count)
  // The first views of a list built from the kept one have its roles and tokens: not read again.
  let index = Math.min(knownSharedWith(messages, kept.list), kept.listShares, most)
  while (
    index < most &&
    (messages[index] as MessageView).role === kept.roles[index] &&
    (messages[index] as MessageView).tokens === kept.tokens[index]
  )
    index++
  return index
}

/** The walk without a carry, for a count past the list (the hash then reads `undefined`, as it always did) or a list too long to keep. */
function walkedWhole(
  view: ChatView,
  at: number | undefined,
  count: number,
): { readonly atPrevious: string | undefined; readonly whole: string } {
  const hasher = new TextHasher()
  let atPrevious = at === 0 ? hasher.digest() : undefined
  for (let index = 0; index < count; index++) {
    const message = view.messages[index]
    hasher.add(`${message?.role}:${message?.tokens};`)
    if (index + 1 === at) atPrevious = hasher.digest()
  }
  return { atPrevious, whole: hasher.digest() }
}
