import {
  chooseBreakpoints,
  maxBreakpoints,
  withinLookback,
  type BreakpointCandidate,
  type ExistingBreakpoint,
} from './breakpoint-rules.ts'
import { isJsonObject, type Json } from '../../util/json.ts'
import type { ApplyOptions } from '../adapter-contract.ts'
import { blocksOf, markable } from './blocks.ts'
import { bridgeMark, oneMarker } from './next-edit-bridge.ts'
import { scanMessages } from './message-scan.ts'

export { scanMessages } from './message-scan.ts'

/** How the adapter sizes the request's head and each message, for the prefix a marker would cache. */
export interface PrefixSizes {
  readonly head: (body: Json) => number
  readonly message: (message: unknown, index: number) => number
}

export interface PlacedBreakpoints {
  readonly count: number
  /**
   * The result the next batch's entry went just ahead of, when it is not the one asked: a bridge
   * (next-edit-bridge.ts), or null when no marker could go there (the client's own fill every slot).
   */
  readonly promisedResult?: string | null
}

/**
 * Fill free cache_control slots (docs/rewriting.md, cache breakpoints): newest block, previous request's tail (unless a marker after it
 * reaches it by lookback), just ahead of where the next batch edits, end of system, end of tools. Says how many it added.
 */
export function placeBreakpoints(body: Json, options: ApplyOptions, sizes: PrefixSizes): PlacedBreakpoints {
  const tools = Array.isArray(body['tools']) ? (body['tools'] as Json[]) : []
  const system = Array.isArray(body['system']) ? (body['system'] as Json[]) : []
  const messages = body['messages'] as Json[]
  const existing: ExistingBreakpoint[] = []
  let position = 0
  let clientSetTtl = isJsonObject(body['cache_control']) && body['cache_control']['ttl'] !== undefined
  const note = (marked: unknown, at = position): void => {
    if (!isJsonObject(marked)) return
    existing.push({ position: at, ttl: marked['ttl'] === '1h' ? '1h' : '5m' })
    clientSetTtl ||= marked['ttl'] !== undefined
  }
  for (const tool of tools) {
    note(tool['cache_control'])
    position++
  }
  const toolsEnd = position - 1
  for (const block of system) {
    note(block['cache_control'])
    position++
  }
  const systemEnd = position - 1
  const scan = scanMessages(messages, position, options.nextEditResult, options.followingEditResult)
  for (const marker of scan.markers) note(marker.marked, marker.position)
  const { lastMarkable } = scan
  // Prefix sizes are measured on the request as rewritten, so rewriting it again decides the same; they only
  // matter up to the minimum cacheable length, so the walk stops there (usually at the head).
  const headPart = sizes.head(body)
  const totals: number[] = []
  const prefixAt = (index: number): number => {
    let tokens = totals[totals.length - 1] ?? headPart
    while (totals.length <= index && tokens < options.minCacheableTokens) {
      tokens += sizes.message(messages[totals.length], totals.length)
      totals.push(tokens)
    }
    return totals[index] ?? tokens
  }
  const first: BreakpointCandidate[] = []
  const newest = messages.length - 1
  const rolling = lastMarkable[newest] ?? -1
  if (rolling >= 0) first.push({ name: 'rolling', position: rolling, prefixTokens: prefixAt(newest) })
  if (options.previousTail !== undefined && options.previousTail < newest) {
    const previous = lastMarkable[options.previousTail] ?? -1
    const tailMarker = isJsonObject(body['cache_control'])
      ? scan.end - 1
      : Math.max(rolling, ...existing.map((m) => m.position))
    // A marker within the lookback after the old tail finds its entry anyway; the slot is worth more elsewhere.
    if (previous >= 0 && !withinLookback(previous, tailMarker))
      first.push({ name: 'previous-tail', position: previous, prefixTokens: prefixAt(options.previousTail) })
  }
  const nextEdit = (edit: { readonly position: number; readonly message: number }): BreakpointCandidate => ({
    name: 'next-edit',
    position: edit.position,
    prefixTokens: prefixAt(edit.message),
  })
  // The stable head gets a one-hour entry when the session's pauses make it pay and the client chose no TTL itself.
  const head = options.stableTtl === '1h' && !clientSetTtl ? ({ ttl: '1h' } as const) : {}
  const last: BreakpointCandidate[] = []
  if (system.length > 0 && markable(system[system.length - 1] as Json))
    last.push({ name: 'system', position: systemEnd, prefixTokens: headPart, ...head })
  if (tools.length > 0) last.push({ name: 'tools', position: toolsEnd, prefixTokens: headPart, ...head })
  const automatic = isJsonObject(body['cache_control'])
  const choose = (edits: readonly BreakpointCandidate[]): BreakpointCandidate[] =>
    chooseBreakpoints({
      existing,
      automatic,
      automaticTtl: automatic && (body['cache_control'] as Json)['ttl'] === '1h' ? '1h' : '5m',
      candidates: [...first, ...edits, ...last],
      minCacheableTokens: options.minCacheableTokens,
    })
  // On a batch request: ahead of where it starts (to read), then ahead of where the next one will (written fresh now).
  const { nextEdit: read, followingEdit: following } = scan
  let chosen = choose([read, following].flatMap((edit) => (edit ? [nextEdit(edit)] : [])))
  let promisedResult: string | undefined
  if (read && following && !chosen.some((c) => c.position === following.position)) {
    const tokens = (from: number, to: number): number => {
      let sum = 0
      for (let index = from; index < to; index++) sum += sizes.message(messages[index], index)
      return sum
    }
    const one = oneMarker(bridgeMark(scan.resultMarks ?? [], read, following), read, following, tokens)
    const alone = choose([nextEdit(one.at)])
    if (alone.some((c) => c.position === one.at.position)) {
      chosen = alone
      if (one.promisedResult !== undefined) promisedResult = one.promisedResult
    }
  }
  if (chosen.length > 0)
    markPositions(body, new Map(chosen.map((candidate) => [candidate.position, candidate.ttl])), scan.positions)
  // Every slot is the client's: no marker of ctxgate's can read an entry ahead of the next batch, now or then.
  const asked = options.followingEditResult ?? options.nextEditResult
  if (asked !== undefined && existing.length + (automatic ? 1 : 0) >= maxBreakpoints)
    return { count: 0, promisedResult: null }
  return { count: chosen.length, ...(promisedResult !== undefined ? { promisedResult } : {}) }
}

/** Writes the chosen markers; `messageStarts` is the scan's first position of each message (and the end). */
function markPositions(
  body: Json,
  positions: ReadonlyMap<number, '1h' | undefined>,
  messageStarts: readonly number[],
): void {
  let position = 0
  const mark = (block: Json): Json => {
    const at = position++
    if (!positions.has(at)) return block
    const ttl = positions.get(at)
    return { ...block, cache_control: ttl ? { type: 'ephemeral', ttl } : { type: 'ephemeral' } }
  }
  if (Array.isArray(body['tools'])) body['tools'] = (body['tools'] as Json[]).map(mark)
  if (Array.isArray(body['system'])) body['system'] = (body['system'] as Json[]).map(mark)
  // Most messages hold no new marker: only those that do are found (by the scan's positions) and copied.
  const messages = (body['messages'] as Json[]).slice()
  const touched = new Set<number>()
  for (const target of positions.keys()) {
    const index = messageAt(messageStarts, target)
    if (index >= 0 && index < messages.length) touched.add(index)
  }
  for (const index of touched) {
    const message = messages[index] as Json
    position = messageStarts[index] as number
    messages[index] = { ...message, content: blocksOf(message).map(mark) }
  }
  body['messages'] = messages
}

/** The message whose blocks hold `position`: the last start at or before it (-1 before the first message). */
function messageAt(starts: readonly number[], position: number): number {
  let low = 0
  let high = starts.length - 2
  let found = -1
  while (low <= high) {
    const middle = (low + high) >> 1
    if ((starts[middle] as number) <= position) {
      found = middle
      low = middle + 1
    } else high = middle - 1
  }
  return found >= 0 && position < (starts[found + 1] as number) ? found : -1
}
