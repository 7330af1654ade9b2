/**
 * Needed-but-hidden events of one variant of one run, counted: events per 100 requests, the share
 * of requests with one, where they came from (tool kind, age of the output), and a few examples.
 */
/** What the tally reads of one hidden string: the (at-risk.ts) or an own input's (own-inputs.ts). */
export interface TalliedString {
  readonly text: string
  readonly kind: string
  readonly where: string
  readonly sourceTool: string
  readonly sourceKind: string
  readonly age: number
  /** The source's clearing class at the request; an own input has none. */
  readonly sourceRisk?: string
  readonly fate: string
}

export interface HiddenExample {
  readonly request: number
  readonly text: string
  readonly kind: string
  readonly sourceTool: string
  readonly age: number
  /** Its clearing class at the request (absent for an own input), and what became of it in the request as sent. */
  readonly risk?: string
  readonly fate: string
  /** How the agent used it: `text`, or the tool and input field. */
  readonly usedIn: string
}

export interface HiddenTally {
  /** Requests the policy sent upstream (a request it refused shows nothing, and is counted as refused elsewhere). */
  readonly requests: number
  readonly events: number
  readonly requestsWithEvents: number
  /** Events by the kind of tool output they came from (read, command, search, edit, other). */
  readonly bySource: Readonly<Record<string, number>>
  /** Events by the age of that output in tool rounds: `0-10`, `11-20`, `21+`. */
  readonly byAge: Readonly<Record<string, number>>
  /** Events by the clearing class of that output at the request (superseded, output, read, editing). */
  readonly byRisk: Readonly<Record<string, number>>
  /** Events by what became of that output in the request as sent (cleared, folded, dropped, whole). */
  readonly byFate: Readonly<Record<string, number>>
  readonly examples: readonly HiddenExample[]
}

export const emptyTally: HiddenTally = {
  requests: 0,
  events: 0,
  requestsWithEvents: 0,
  bySource: {},
  byAge: {},
  byRisk: {},
  byFate: {},
  examples: [],
}

const maxExamples = 5

export function ageBucket(age: number): string {
  return age <= 10 ? '0-10' : age <= 20 ? '11-20' : '21+'
}

/** Adds one request's hidden strings. */
export function addRequest(tally: HiddenTally, request: number, hidden: readonly TalliedString[]): HiddenTally {
  const bySource = { ...tally.bySource }
  const byAge = { ...tally.byAge }
  const byRisk = { ...tally.byRisk }
  const byFate = { ...tally.byFate }
  for (const event of hidden) {
    bySource[event.sourceKind] = (bySource[event.sourceKind] ?? 0) + 1
    byAge[ageBucket(event.age)] = (byAge[ageBucket(event.age)] ?? 0) + 1
    if (event.sourceRisk !== undefined) byRisk[event.sourceRisk] = (byRisk[event.sourceRisk] ?? 0) + 1
    byFate[event.fate] = (byFate[event.fate] ?? 0) + 1
  }
  const examples = [...tally.examples]
  // One example per request, so a few requests with many strings do not fill the list.
  const first = hidden[0]
  if (first && examples.length < maxExamples)
    examples.push({
      request,
      text: first.text.length > 80 ? `${first.text.slice(0, 77)}...` : first.text,
      kind: first.kind,
      sourceTool: first.sourceTool,
      age: first.age,
      ...(first.sourceRisk === undefined ? {} : { risk: first.sourceRisk }),
      fate: first.fate,
      usedIn: first.where,
    })
  return {
    requests: tally.requests + 1,
    events: tally.events + hidden.length,
    requestsWithEvents: tally.requestsWithEvents + (hidden.length > 0 ? 1 : 0),
    bySource,
    byAge,
    byRisk,
    byFate,
    examples,
  }
}

export function combineTallies(tallies: readonly HiddenTally[]): HiddenTally {
  const merge = (pick: (tally: HiddenTally) => Readonly<Record<string, number>>): Record<string, number> => {
    const merged: Record<string, number> = {}
    for (const tally of tallies)
      for (const [key, value] of Object.entries(pick(tally))) merged[key] = (merged[key] ?? 0) + value
    return merged
  }
  return {
    requests: tallies.reduce((sum, tally) => sum + tally.requests, 0),
    events: tallies.reduce((sum, tally) => sum + tally.events, 0),
    requestsWithEvents: tallies.reduce((sum, tally) => sum + tally.requestsWithEvents, 0),
    bySource: merge((tally) => tally.bySource),
    byAge: merge((tally) => tally.byAge),
    byRisk: merge((tally) => tally.byRisk),
    byFate: merge((tally) => tally.byFate),
    examples: tallies.flatMap((tally) => tally.examples).slice(0, maxExamples),
  }
}

export function eventsPer100(tally: HiddenTally): number {
  return tally.requests === 0 ? 0 : (tally.events / tally.requests) * 100
}

export function shareWithEvents(tally: HiddenTally): number {
  return tally.requests === 0 ? 0 : tally.requestsWithEvents / tally.requests
}
