/**
 * Sends one run's requests, edited by a policy, through the fake upstream's prompt cache (no
 * sockets) and adds up what each would be billed. Breakpoints are placed the way ctxgate places
 * them: the client's own kept, free slots filled with the newest block, the previous request's
 * tail, the end of system, the end of tools.
 */
import { AnthropicPromptCache, type PromptBlock } from '../../src/mock/prompt-cache.ts'
import { billedEquivalentInput } from '../../src/billing/usage-totals.ts'
import { chooseBreakpoints, type BreakpointCandidate } from '../../src/providers/anthropic/breakpoint-rules.ts'
import { totalTokens } from '../../src/rewrite/economy/decide.ts'
import type { ConversationCost } from '../../src/rewrite/economy/types.ts'
import { budgetOnly } from './policies.ts'
import { describe, editedBody, perRequestTokens, type Described, type Json } from './describe.ts'

/** What a policy sees before each request, and the results it decides to clear now. */
export interface PolicyContext {
  readonly conversation: ConversationCost
  /** 1-based request number in the run. */
  readonly request: number
  readonly requestsInRun: number
  /** Unedited prompt sizes of the requests so far, this one last. */
  readonly originalSizes: readonly number[]
}

export interface Policy {
  readonly name: string
  /** ctxgate in front (breakpoints placed); false sends the client's request as it is. */
  readonly proxied: boolean
  /** Where the system note goes: never, from the first request, or with the first edit. */
  readonly note: 'none' | 'always' | 'first-edit'
  decide(context: PolicyContext): readonly string[]
}

export interface Billed {
  readonly requests: number
  readonly refused: number
  readonly input: number
  readonly write5m: number
  readonly write1h: number
  readonly read: number
  readonly batches: number
  readonly largest: number
}

export const emptyBilled: Billed = {
  requests: 0,
  refused: 0,
  input: 0,
  write5m: 0,
  write1h: 0,
  read: 0,
  batches: 0,
  largest: 0,
}

export function billedEquivalent(billed: Billed): number {
  return billedEquivalentInput({
    inputTokens: billed.input,
    cacheWrite5mTokens: billed.write5m,
    cacheWrite1hTokens: billed.write1h,
    cacheReadTokens: billed.read,
    outputTokens: 0,
  })
}

export function addBilled(a: Billed, b: Billed): Billed {
  return {
    requests: a.requests + b.requests,
    refused: a.refused + b.refused,
    input: a.input + b.input,
    write5m: a.write5m + b.write5m,
    write1h: a.write1h + b.write1h,
    read: a.read + b.read,
    batches: a.batches + b.batches,
    largest: Math.max(a.largest, b.largest),
  }
}

export interface SimulationOptions {
  readonly window: number
  readonly budget: number
  readonly minCacheableTokens: number
  /** Simulated time between requests. */
  readonly gapMs: number
}

const hardLimit = budgetOnly()

export function simulateRun(bodies: readonly Json[], policy: Policy, options: SimulationOptions): Billed {
  let now = 0
  const cache = new AnthropicPromptCache(() => now)
  const cleared = new Set<string>()
  const originalSizes: number[] = []
  let noteOn = policy.note === 'always'
  let previousTail: number | undefined
  let billed = emptyBilled
  for (const [index, body] of bodies.entries()) {
    const clientTokens = describe(body, options.budget).total
    originalSizes.push(clientTokens)
    let described = describe(editedBody(body, cleared, noteOn && policy.proxied), options.budget, clientTokens)
    const chosen = decideWithHardLimit(
      policy,
      {
        conversation: described.conversation,
        request: index + 1,
        requestsInRun: bodies.length,
        originalSizes,
      },
      body,
      noteOn && policy.proxied,
    )
    const fresh = chosen.filter((id) => !cleared.has(id))
    for (const id of fresh) cleared.add(id)
    if (fresh.length > 0 && policy.note === 'first-edit') noteOn = true
    if (fresh.length > 0 || noteOn)
      described = describe(editedBody(body, cleared, noteOn && policy.proxied), options.budget, clientTokens)
    const messageCount = (body['messages'] as unknown[]).length
    // After a shorter history (a compaction) the old tail position means nothing.
    if (previousTail !== undefined && previousTail >= messageCount - 1) previousTail = undefined
    const blocks = policy.proxied
      ? withBreakpoints(described, previousTail, options.minCacheableTokens)
      : described.blocks
    previousTail = messageCount - 1
    billed = addBilled(billed, sendOne(cache, String(body['model']), blocks, options, fresh.length > 0))
    now += options.gapMs
  }
  return billed
}

/** The budget stays the hard limit whatever the policy: what it left over budget is cleared the way ctxgate does today. */
function decideWithHardLimit(policy: Policy, context: PolicyContext, body: Json, noteOn: boolean): string[] {
  const chosen = [...policy.decide(context)]
  if (!policy.proxied) return chosen
  const after =
    chosen.length === 0
      ? context.conversation
      : describe(
          editedBody(body, new Set(chosen), noteOn),
          context.conversation.budget,
          context.conversation.clientTokens,
        ).conversation
  if (totalTokens(after) <= after.budget) return chosen
  return [...chosen, ...hardLimit.decide({ ...context, conversation: after })]
}

function sendOne(
  cache: AnthropicPromptCache,
  model: string,
  blocks: readonly PromptBlock[],
  options: SimulationOptions,
  batch: boolean,
): Billed {
  const total = perRequestTokens + blocks.reduce((sum, block) => sum + block.tokens, 0)
  if (total > options.window) return { ...emptyBilled, requests: 1, refused: 1 }
  const usage = cache.use(model, blocks, options.minCacheableTokens)
  return {
    requests: 1,
    refused: 0,
    input: usage.inputTokens + perRequestTokens,
    write5m: usage.cacheWrite5mTokens,
    write1h: usage.cacheWrite1hTokens,
    read: usage.cacheReadTokens,
    batches: batch ? 1 : 0,
    largest: total,
  }
}

function withBreakpoints(described: Described, previousTail: number | undefined, minCacheable: number): PromptBlock[] {
  const { blocks, lastMarkable, prefixAtMessage, headBlocks, toolCount, conversation } = described
  const existing = blocks.flatMap((block, position) => (block.breakpoint ? [{ position, ttl: block.breakpoint }] : []))
  const candidates: BreakpointCandidate[] = []
  const newest = lastMarkable.length - 1
  const rolling = lastMarkable[newest] ?? -1
  if (rolling >= 0) candidates.push({ name: 'rolling', position: rolling, prefixTokens: prefixAtMessage[newest] ?? 0 })
  if (previousTail !== undefined && previousTail < newest) {
    const previous = lastMarkable[previousTail] ?? -1
    if (previous >= 0)
      candidates.push({ name: 'previous-tail', position: previous, prefixTokens: prefixAtMessage[previousTail] ?? 0 })
  }
  if (headBlocks > toolCount)
    candidates.push({ name: 'system', position: headBlocks - 1, prefixTokens: conversation.headTokens })
  if (toolCount > 0) candidates.push({ name: 'tools', position: toolCount - 1, prefixTokens: conversation.headTokens })
  const chosen = chooseBreakpoints({ existing, automatic: false, candidates, minCacheableTokens: minCacheable })
  const marked = new Set(chosen.map((candidate) => candidate.position))
  return blocks.map((block, position) => (marked.has(position) ? { ...block, breakpoint: '5m' } : block))
}
