/**
 * How likely the agent is to need a tool result again once it is cleared, as five classes, and the
 * order clearing takes them in (docs/quality.md): superseded results first (a file read later read
 * again or rewritten, a command later run again), then command, test and search output, then file
 * reads nothing superseded, last reads of files the agent has edited since (it is still working on
 * them, and quotes them back in its edits). The newest run of each test (`test`) is ordered with
 * output but priced at its own measured hazard: agents report from it while it is young, so a
 * below-budget batch keeps it whole for 10 rounds (issue #23's point A; BENCHMARKS.md, round 9).
 */
import { stepRound, type RoundWalk } from './rounds.ts'
import type { MessageView } from './types.ts'
import { callTarget, commandOf, parsedInput, testRunKey, type CallTarget } from './tool-kind.ts'

export type ClearRisk = 'superseded' | 'output' | 'test' | 'read' | 'editing'

/** Clearing order: lower first. */
export const riskRank: Readonly<Record<ClearRisk, number>> = {
  superseded: 0,
  output: 1,
  test: 1,
  read: 2,
  editing: 3,
}

export interface ToolCall {
  readonly id: string
  readonly name: string
  readonly input: unknown
}

interface Classified extends CallTarget {
  readonly id: string
  /** Tool name and input, as one comparable key: the same call made twice. */
  readonly key: string
  /** A read of the whole file (no offset, limit or range): a later one supersedes any earlier read. */
  readonly whole: boolean
  /** Rewrites the file whole (Write, create), rather than editing part of it. */
  readonly rewrites: boolean
  /** The tests a shell command runs (testRunKey), whatever it prints them through. */
  readonly testRun?: string
}

const rangeFields = ['offset', 'limit', 'view_range', 'start_line', 'end_line', 'line_start', 'lines']
const rewriteTools = new Set(['write', 'write_file', 'create_file'])

/** The risk class of every call's result, from the calls in conversation order. */
export function clearRisks(calls: readonly ToolCall[]): Map<string, ClearRisk> {
  return risksOfClassified(calls.map(classify))
}

function risksOfClassified(classified: readonly Classified[]): Map<string, ClearRisk> {
  const risks = new Map<string, ClearRisk>()
  // Walk newest first, remembering what later calls did to each file and which calls were made again.
  const laterKeys = new Set<string>()
  const laterWholeRead = new Set<string>()
  const laterRewrite = new Set<string>()
  const laterEdit = new Set<string>()
  const laterTestRuns = new Set<string>()
  for (let index = classified.length - 1; index >= 0; index--) {
    const call = classified[index] as Classified
    risks.set(call.id, riskOf(call, { laterKeys, laterWholeRead, laterRewrite, laterEdit, laterTestRuns }))
    laterKeys.add(call.key)
    if (call.testRun !== undefined) laterTestRuns.add(call.testRun)
    if (call.path === undefined) continue
    if (call.kind === 'read' && call.whole) laterWholeRead.add(call.path)
    if (call.kind === 'edit') (call.rewrites ? laterRewrite : laterEdit).add(call.path)
  }
  return risks
}

interface Later {
  readonly laterKeys: ReadonlySet<string>
  readonly laterWholeRead: ReadonlySet<string>
  readonly laterRewrite: ReadonlySet<string>
  readonly laterEdit: ReadonlySet<string>
  readonly laterTestRuns: ReadonlySet<string>
}

function riskOf(call: Classified, later: Later): ClearRisk {
  if (later.laterKeys.has(call.key)) return 'superseded'
  if (call.testRun !== undefined) return later.laterTestRuns.has(call.testRun) ? 'output' : 'test'
  if (call.kind !== 'read' || call.path === undefined) return 'output'
  if (later.laterWholeRead.has(call.path) || later.laterRewrite.has(call.path)) return 'superseded'
  return later.laterEdit.has(call.path) ? 'editing' : 'read'
}

/**
 * The reads of the files `touches` accepts that no later call superseded (clearRisks' rule on
 * those calls alone: classing every call of a long session costs milliseconds).
 */
export function latestReadsOf(calls: readonly ToolCall[], touches: (path: string) => boolean): Set<string> {
  const relevant = calls
    .filter((call) => {
      const path = callTarget(call.name, parsedInput(call.input)).path
      return path !== undefined && touches(normalPath(path))
    })
    .map(classify)
  const latest = new Set<string>()
  const laterKeys = new Set<string>()
  const laterWholeRead = new Set<string>()
  const laterRewrite = new Set<string>()
  for (let index = relevant.length - 1; index >= 0; index--) {
    const call = relevant[index] as Classified
    const path = call.path as string
    if (call.kind === 'read' && !laterKeys.has(call.key) && !laterWholeRead.has(path) && !laterRewrite.has(path))
      latest.add(call.id)
    laterKeys.add(call.key)
    if (call.kind === 'read' && call.whole) laterWholeRead.add(path)
    if (call.kind === 'edit' && call.rewrites) laterRewrite.add(path)
  }
  return latest
}

/** What a call fetches: its comparable key (tool and input) and, for a read, the file. */
export function describeCall(call: ToolCall): { readonly key: string; readonly readPath?: string } {
  const classified = classify(call)
  return classified.kind === 'read' && classified.path !== undefined
    ? { key: classified.key, readPath: classified.path }
    : { key: classified.key }
}

function classify(call: ToolCall): Classified {
  const input = parsedInput(call.input)
  const target = callTarget(call.name, input)
  const fields = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {}
  const testRun = target.kind === 'command' ? testRunKey(commandOf(fields)) : undefined
  return {
    ...target,
    ...(target.path !== undefined ? { path: normalPath(target.path) } : {}),
    ...(testRun !== undefined ? { testRun } : {}),
    id: call.id,
    // An edit's input can be a whole file: never serialized (on every request), as an edit is not fetched again.
    key: target.kind === 'edit' ? `${call.name}\u0000edit\u0000${call.id}` : `${call.name}\u0000${stableJson(input)}`,
    whole: target.partial !== true && !rangeFields.some((field) => fields[field] !== undefined),
    rewrites:
      rewriteTools.has(call.name.toLowerCase()) ||
      (call.name === 'str_replace_editor' && fields['command'] === 'create'),
  }
}

export function normalPath(path: string): string {
  return path.replace(/^\.\//, '').replace(/\/+/g, '/')
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`
  if (typeof value === 'object' && value !== null)
    return `{${Object.keys(value)
      .toSorted()
      .map((key) => `${JSON.stringify(key)}:${stableJson((value as Record<string, unknown>)[key])}`)
      .join(',')}}`
  return JSON.stringify(value) ?? 'null'
}

/** The calls of a rewrite view, in order (inputs where the adapter gives them). */
export function callsOfView(messages: readonly MessageView[]): ToolCall[] {
  return messages.flatMap((message) =>
    message.toolCallIds.map((id, position) => ({
      id,
      name: message.toolCallNames?.[position] ?? '',
      input: message.toolCallInputs?.[position],
    })),
  )
}

/**
 * Chance per request that the agent's next message needs a result of this class and age (in tool
 * rounds) from that result alone, measured on the replay sets (`bench/needed-by-risk.ts`, BENCHMARKS.md
 * "Which results the agent needs again"). Ages 0-3 are the protected rounds, priced like 4-10.
 */
const hazardTable: Readonly<Record<ClearRisk, readonly [number, number, number]>> = {
  superseded: [0.0099, 0.0047, 0.0025],
  output: [0.0063, 0.0016, 0.0011],
  // Measured (round 7): above the below-budget cap while 10 rounds old or younger, so kept whole then.
  test: [0.0246, 0.0099, 0.0051],
  read: [0.0485, 0.0292, 0.0084],
  editing: [0.0817, 0.0897, 0.0842],
}

/** Below budget a result is cleared only when the agent needs it again this rarely (per request). */
export const belowBudgetMaxHazard = 0.01

/** The last age of the young and of the middle band; older is old. */
const youngUpTo = 10
const middleUpTo = 20

export function hazardOf(risk: ClearRisk, age: number): number {
  const [young, middle, old] = hazardTable[risk]
  return age <= youngUpTo ? young : age <= middleUpTo ? middle : old
}

/** Chance the agent fetches a cleared result again within `requests` requests. */
export function refetchChance(hazard: number, requests: number): number {
  return 1 - (1 - hazard) ** Math.max(0, requests)
}

/**
 * Each tool result's hazard in a rewrite view: its class from the calls, its age in tool rounds
 * (consecutive calling messages are one round, as the economy counts them).
 */
export function resultHazards(messages: readonly MessageView[]): ReadonlyMap<string, number> {
  return perView(hazardsByView, messages, () => {
    const hazards = new Map<string, number>()
    for (const [id, { risk, age }] of resultRiskAges(messages)) hazards.set(id, hazardOf(risk, age))
    return hazards
  })
}

/**
 * The economy, the planner, the next-edit marker and restore on use all class the same view's calls,
 * some several times per request (each plan pass): once per message list, kept as long as the list is.
 */
const risksByView = new WeakMap<readonly MessageView[], ReadonlyMap<string, ClearRisk>>()
const riskAgesByView = new WeakMap<readonly MessageView[], ReadonlyMap<string, RiskAge>>()
const hazardsByView = new WeakMap<readonly MessageView[], ReadonlyMap<string, number>>()

function perView<T>(cache: WeakMap<readonly MessageView[], T>, messages: readonly MessageView[], make: () => T): T {
  const known = cache.get(messages)
  if (known !== undefined) return known
  const made = make()
  cache.set(messages, made)
  return made
}

/** Each call's risk class in a rewrite view (clearRisks over its calls). */
export function viewRisks(messages: readonly MessageView[]): ReadonlyMap<string, ClearRisk> {
  return perView(risksByView, messages, () => risksOfClassified(messages.flatMap(classifiedCalls)))
}

/**
 * A message's calls classified, once per message view: a client re-sends its history and the adapter
 * hands back the same (frozen) view for each re-sent message, so only new messages' calls are classed
 * again (their tool, path and comparable key; the risks then still come from every call, newest first).
 */
const classifiedByMessage = new WeakMap<MessageView, readonly Classified[]>()

function classifiedCalls(message: MessageView): readonly Classified[] {
  const known = classifiedByMessage.get(message)
  if (known !== undefined) return known
  const classified = callsOfView([message]).map(classify)
  classifiedByMessage.set(message, classified)
  return classified
}

type RiskAge = { readonly risk: ClearRisk; readonly age: number }

/** Each tool result's risk class and its age in tool rounds (the newest round is age 0). */
export function resultRiskAges(messages: readonly MessageView[]): ReadonlyMap<string, RiskAge> {
  return perView(riskAgesByView, messages, () => riskAgesOf(messages))
}

function riskAgesOf(messages: readonly MessageView[]): Map<string, RiskAge> {
  const risks = viewRisks(messages)
  const roundOf = new Map<string, number>()
  const walk: RoundWalk = { count: 0, called: false }
  for (const message of messages) {
    stepRound(walk, message)
    for (const id of message.toolCallIds) roundOf.set(id, walk.count - 1)
  }
  const ages = new Map<string, RiskAge>()
  for (const [id, risk] of risks) ages.set(id, { risk, age: walk.count - 1 - (roundOf.get(id) ?? 0) })
  return ages
}

/**
 * Chance the agent fetches a cleared result again within `requests` requests, its age advancing a
 * round per request (the hazard falls with age: a constant young rate over a long horizon overstates it).
 */
export function refetchChanceOver(risk: ClearRisk, age: number, requests: number): number {
  const [young, middle, old] = hazardTable[risk]
  const first = age + 1
  const last = age + Math.max(0, Math.floor(requests))
  // Requests spent in each band of ages first..last: the hazard is constant within a band.
  const inBand = (from: number, to: number): number => Math.max(0, Math.min(last, to) - Math.max(first, from) + 1)
  const kept =
    (1 - young) ** inBand(-Infinity, youngUpTo) *
    (1 - middle) ** inBand(youngUpTo + 1, middleUpTo) *
    (1 - old) ** inBand(middleUpTo + 1, Infinity)
  return 1 - kept
}

/** Results in clearing order: by class (superseded, output, read, editing), oldest first within one. */
export function clearOrder<T extends { readonly id: string }>(
  results: readonly T[],
  messages: readonly MessageView[],
): T[] {
  if (results.length < 2) return [...results]
  const risks = viewRisks(messages)
  const rank = (result: T): number => riskRank[risks.get(result.id) ?? 'output']
  return results
    .map((result, order) => ({ result, order, rank: rank(result) }))
    .toSorted((a, b) => a.rank - b.rank || a.order - b.order)
    .map((entry) => entry.result)
}

export const maxRank = 3

/** Each result's clearing rank (0 first) in a rewrite view. */
export function clearRanks(messages: readonly MessageView[]): Map<string, number> {
  const ranks = new Map<string, number>()
  for (const [id, risk] of viewRisks(messages)) ranks.set(id, riskRank[risk])
  return ranks
}
