import { RecentWalks } from '../util/recent-walks.ts'
import { stepRound, type RoundWalk, type Rounds } from './rounds.ts'
import { earliestFromOwnNeeds, ownCallNeeded } from './safe-cuts.ts'
import type { MessageView, ToolResultView } from './types.ts'

/**
 * What the planner reads of a conversation's messages alone, whatever the budget or the decisions:
 * its tool results, where each call is, its rounds, the safe cuts. A client re-sends its history,
 * and the parser and the adapter hand back the same (frozen) view for each re-sent message, so
 * the facts of the messages a recent request shares as its first ones are carried from it (a short
 * message, viewed anew, is shared when it has no results and the same role and calls), and
 * only the rest is read (docs/proxy.md, the hot path). The same messages planned again in one
 * request (a replan, the economy's batch) share all of them.
 */
export interface ViewFacts {
  readonly results: readonly ToolResultView[]
  /** Each call id's message (the last one, when an id repeats). */
  readonly callMessage: ReadonlyMap<string, number>
  readonly rounds: Rounds
  readonly minCallNeeded: readonly number[]
}

/** Facts with what a later request needs to carry from any of its first messages. */
interface Carried {
  readonly messages: readonly MessageView[]
  readonly facts: ViewFacts
  /** Per message, how many results come before it (one more entry: the total). */
  readonly resultsBefore: readonly number[]
  /** Per message, whether the messages up to it end in a run of calls (the rounds' count goes on from it). */
  readonly calledAfter: readonly boolean[]
  /** An id was a call more than once: a carried map cannot tell which message to forget it from. */
  readonly repeatedCall: boolean
  /** Per message, the earliest call its own results answer (safe-cuts.ts); the safe cuts are their running minimum from the end. */
  readonly ownNeeded: readonly number[]
  /**
   * Per result id, the first message holding it here or in a request read before in the same chain
   * (never later than here): whether a call that moved could change a carried message's own need.
   */
  readonly resultAt: Map<string, number>
}

/** Longer conversations are not kept (the facts hold their messages' views, results' text included, until four newer ones push them out). */
const keptMaxMessages = 4096
/** Nor conversations whose results hold more than this (a million-token window's worth: about 4 MB of text). */
const keptMaxResultTokens = 1_000_000
/** Conversations going on at once whose facts are kept, as the parse keeps its recent bodies. */
const recent = new RecentWalks<Carried>(4)

/** The messages' facts, computed or carried from a recent request's; the same as computed from every message. */
export function viewFacts(messages: readonly MessageView[]): ViewFacts {
  const { from, shared, whole } = recent.longest(
    (kept) => sharedLength(kept.messages, messages),
    (kept, length) => length === messages.length && length === kept.messages.length,
    (kept) => Math.min(kept.messages.length, messages.length),
  )
  if (whole) return (from as Carried).facts
  const carried = from !== undefined && !from.repeatedCall ? extend(from, shared, messages) : fromScratch(messages)
  const resultTokens = carried.facts.results.reduce((sum, result) => sum + result.tokens, 0)
  if (messages.length > keptMaxMessages || resultTokens > keptMaxResultTokens) return carried.facts
  recent.keep(carried)
  return carried.facts
}

/** How many first messages the two lists share: the same objects, or messages with no results that call the same. */
function sharedLength(before: readonly MessageView[], messages: readonly MessageView[]): number {
  const most = Math.min(before.length, messages.length)
  let index = 0
  while (index < most && sameFacts(before[index] as MessageView, messages[index] as MessageView)) index++
  return index
}

/** A short message is viewed anew each request (only long ones are shared): its facts are its role and calls. */
function sameFacts(before: MessageView, message: MessageView): boolean {
  if (before === message) return true
  return (
    before.toolResults.length === 0 &&
    message.toolResults.length === 0 &&
    before.role === message.role &&
    sameList(before.toolCallIds, message.toolCallIds) &&
    (before.toolCallNames === undefined
      ? message.toolCallNames === undefined
      : message.toolCallNames !== undefined && sameList(before.toolCallNames, message.toolCallNames))
  )
}

function sameList(before: readonly string[], list: readonly string[]): boolean {
  return before.length === list.length && before.every((item, index) => item === list[index])
}

function fromScratch(messages: readonly MessageView[]): Carried {
  const empty = {
    results: [],
    callMessage: new Map(),
    callOf: new Map(),
    roundAt: [],
    resultsBefore: [],
    calledAfter: [],
  }
  return extendFrom({ ...empty, ownNeeded: [], resultAt: new Map() }, 0, messages, 0, false, [])
}

/** The first `shared` messages' facts taken from `kept`, the calls of the messages it had after them forgotten. */
function extend(kept: Carried, shared: number, messages: readonly MessageView[]): Carried {
  const { facts } = kept
  const callMessage = new Map(facts.callMessage)
  const callOf = new Map(facts.rounds.callOf)
  const moved: string[] = []
  for (let index = shared; index < kept.messages.length; index++)
    for (const id of kept.messages[index]?.toolCallIds ?? []) {
      callMessage.delete(id)
      callOf.delete(id)
      moved.push(id)
    }
  // Once the chain's ids outgrow twice the results these messages share, they are read anew from those.
  const resultAt =
    kept.resultAt.size <= 2 * (kept.resultsBefore[shared] as number)
      ? kept.resultAt
      : firstResultAt(kept.messages.slice(0, shared))
  const base = {
    results: facts.results.slice(0, kept.resultsBefore[shared]),
    callMessage,
    callOf,
    roundAt: facts.rounds.roundAt.slice(0, shared),
    resultsBefore: kept.resultsBefore.slice(0, shared),
    calledAfter: kept.calledAfter.slice(0, shared),
    ownNeeded: kept.ownNeeded.slice(0, shared),
    resultAt,
  }
  const count = shared === 0 ? 0 : (facts.rounds.roundAt[shared - 1] as number) + 1
  return extendFrom(base, shared, messages, count, shared > 0 && (kept.calledAfter[shared - 1] as boolean), moved)
}

interface Growing {
  readonly results: ToolResultView[]
  readonly callMessage: Map<string, number>
  readonly callOf: Map<string, { readonly tool: string; readonly round: number }>
  readonly roundAt: number[]
  readonly resultsBefore: number[]
  readonly calledAfter: boolean[]
  readonly ownNeeded: number[]
  readonly resultAt: Map<string, number>
}

/** Reads the messages from `from` on into `facts`, the rounds going on from `count` (roundsOf's walk, resumed). */
function extendFrom(
  facts: Growing,
  from: number,
  messages: readonly MessageView[],
  count: number,
  called: boolean,
  moved: readonly string[],
): Carried {
  // A carried message's own need changes only when a call its results answer moved (forgotten, or called again here).
  const callsHere = messages.slice(from).flatMap((message) => message.toolCallIds)
  const ownCarried = ![...moved, ...callsHere].some((id) => (facts.resultAt.get(id) ?? from) < from)
  const walk: RoundWalk = { count, called }
  let repeatedCall = false
  for (let index = from; index < messages.length; index++) {
    const message = messages[index] as MessageView
    facts.resultsBefore.push(facts.results.length)
    for (const result of message.toolResults) {
      facts.results.push(result)
      if (!((facts.resultAt.get(result.id) ?? index) < index)) facts.resultAt.set(result.id, index)
    }
    stepRound(walk, message)
    message.toolCallIds.forEach((id, position) => {
      if (facts.callMessage.has(id)) repeatedCall = true
      facts.callMessage.set(id, index)
      facts.callOf.set(id, { tool: message.toolCallNames?.[position] ?? '', round: walk.count - 1 })
    })
    facts.roundAt.push(walk.count - 1)
    facts.calledAfter.push(walk.called)
  }
  facts.resultsBefore.push(facts.results.length)
  const { results, callMessage, callOf, roundAt, resultsBefore, calledAfter, resultAt } = facts
  const ownNeeded = ownCarried ? facts.ownNeeded : []
  for (let index = ownNeeded.length; index < messages.length; index++)
    ownNeeded.push(ownCallNeeded(messages[index] as MessageView, index, callMessage))
  const viewFacts = {
    results,
    callMessage,
    rounds: { count: walk.count, callOf, roundAt },
    minCallNeeded: earliestFromOwnNeeds(ownNeeded),
  }
  return { messages, facts: viewFacts, resultsBefore, calledAfter, repeatedCall, ownNeeded, resultAt }
}

/** Each result id's first message. */
function firstResultAt(messages: readonly MessageView[]): Map<string, number> {
  const at = new Map<string, number>()
  messages.forEach((message, index) => {
    for (const result of message.toolResults) if (!at.has(result.id)) at.set(result.id, index)
  })
  return at
}
