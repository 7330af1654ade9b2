import type { AddressInfo } from 'node:net'
import { upstreamIds } from '../providers/upstream-ids.ts'
import { Registry } from 'prom-client'
import { Agent, request } from 'undici'
import { buildApp } from '../app.ts'
import { loadConfig } from '../config/load-config.ts'
import type { Config } from '../config/schema.ts'
import { MemorySessionStore } from '../session/memory-store.ts'
import { LearningStore, type ReplayedLengths } from './learning-store.ts'
import { createLogger } from '../log/logger.ts'
import type { CacheWrites } from '../mock/prompt-cache.ts'
import { startMockServer } from '../mock/server.ts'
import { buildAnthropicRequests, type ClientCache, type ReplayRequest } from './build-requests.ts'
import type { Conversation } from './conversation.ts'
import { neededStrings } from './hidden/at-risk.ts'
import { HiddenCounter } from './hidden/counter.ts'
import { ownInputNeeds } from './hidden/own-inputs.ts'
import type { HiddenTally } from './hidden/tally.ts'
import { refetchFigures, repeatedCalls, type RefetchFigures } from './refetches.ts'
import { readAnthropicAnswer, type RequestOutcome } from './request-outcome.ts'
import { summarize, type RunSummary } from './summarize.ts'

const noop = async (): Promise<void> => undefined

/** One way of sending the run: straight to the fake upstream, or through ctxgate with a config. */
export interface Variant {
  readonly label: string
  /** ctxgate config file; undefined with `direct` means no ctxgate at all. */
  readonly configFile?: string
  readonly direct?: boolean
}

export interface ReplayOptions {
  /** Context window of the fake upstream, in its tokens. */
  readonly window: number
  readonly minCacheableTokens: number
  readonly model?: string
  readonly maxTokens: number
  readonly clientCache: ClientCache
  /** The fake upstream's reading of a cache marker inside the prefix just read (default literal). */
  readonly cacheWrites?: CacheWrites
  readonly stream: boolean
  /** Sent as x-ctxgate-budget to ctxgate variants. */
  readonly budget?: number
  /**
   * Per ctxgate variant, the lengths of the sessions replayed before this one (`--learn`): its
   * forecasts then learn from them, as a ctxgate that had served them would. Absent: each run starts cold.
   */
  readonly learned?: ReadonlyMap<string, ReplayedLengths>
  readonly variants: readonly Variant[]
}

/** The regret ledger of one ctxgate variant's run, summed over its batches (ctxgate_economy_ledger_tokens_total). */
export type LedgerFigures = Readonly<Record<string, number>>

export interface RunResult {
  readonly id: string
  readonly source: string
  readonly notes: readonly string[]
  readonly outcomes: Readonly<Record<string, readonly RequestOutcome[]>>
  /** Per ctxgate variant: predicted_cost, predicted_saving, realized_rewrite, realized_saved. */
  readonly ledgers?: Readonly<Record<string, LedgerFigures>>
  readonly summaries: Readonly<Record<string, RunSummary>>
  /** Needed-but-hidden events per variant (docs/quality.md). */
  readonly hidden?: Readonly<Record<string, HiddenTally>>
  /** Per variant, the strings the agent took from its own earlier tool inputs that the request as sent hid (hidden/own-inputs.ts). */
  readonly ownInputHidden?: Readonly<Record<string, HiddenTally>>
  /** Re-fetches per ctxgate variant, as the proxy counted them (refetches.ts). */
  readonly refetches?: Readonly<Record<string, RefetchFigures>>
  /** Requests of the run, and calls in it repeating an earlier one with the whole context: the re-fetch baseline. */
  readonly repeats?: { readonly requests: number; readonly calls: number }
}

export const directLabel = 'direct'

/** Replays one conversation through every variant, each against its own fresh fake upstream. */
export async function replayConversation(conversation: Conversation, options: ReplayOptions): Promise<RunResult> {
  const requests = buildAnthropicRequests(conversation, {
    maxTokens: options.maxTokens,
    clientCache: options.clientCache,
    stream: options.stream,
    ...(options.model ? { model: options.model } : {}),
  })
  const needs = neededStrings(conversation)
  const ownNeeds = ownInputNeeds(conversation)
  const outcomes: Record<string, RequestOutcome[]> = {}
  const hidden: Record<string, HiddenTally> = {}
  const ownInputHidden: Record<string, HiddenTally> = {}
  const ledgers: Record<string, LedgerFigures> = {}
  const refetches: Record<string, RefetchFigures> = {}
  for (const variant of options.variants) {
    const counter = new HiddenCounter(needs, ownNeeds)
    const sent = await sendThrough(variant, requests, options, counter)
    outcomes[variant.label] = sent.outcomes
    if (sent.ledger) ledgers[variant.label] = sent.ledger
    if (sent.refetches) refetches[variant.label] = sent.refetches
    hidden[variant.label] = counter.tally
    ownInputHidden[variant.label] = counter.ownInputTally
  }
  const direct = outcomes[directLabel]
  const summaries: Record<string, RunSummary> = {}
  for (const [label, list] of Object.entries(outcomes))
    summaries[label] = summarize(list, label === directLabel ? undefined : direct)
  return {
    id: conversation.id,
    source: conversation.source,
    notes: conversation.notes,
    outcomes,
    ledgers,
    summaries,
    hidden,
    ownInputHidden,
    refetches,
    repeats: { requests: requests.length, calls: repeatedCalls(conversation) },
  }
}

async function sendThrough(
  variant: Variant,
  requests: readonly ReplayRequest[],
  options: ReplayOptions,
  counter: HiddenCounter,
): Promise<{ outcomes: RequestOutcome[]; ledger?: LedgerFigures; refetches?: RefetchFigures }> {
  const mock = await startMockServer({
    window: options.window,
    minCacheableTokens: options.minCacheableTokens,
    logLimit: 1,
    ...(options.cacheWrites ? { cacheWrites: options.cacheWrites } : {}),
    // Replay's --window bounds the prompt alone, as every replay table so far was measured; the
    // reply's room is a replay setting (--max-tokens), not what the agent asked for.
    replyRoomInWindow: false,
  })
  const dispatcher = new Agent({ keepAliveTimeout: 10_000, headersTimeout: 600_000, bodyTimeout: 600_000 })
  const registry = new Registry()
  const proxy = variant.direct
    ? { baseUrl: mock.url, close: noop }
    : await startProxy(variant, options, mock.url, registry)
  const headers = replayHeaders(variant, options)
  try {
    const outcomes: RequestOutcome[] = []
    let lastSequence = 0
    for (const replayed of requests) {
      const answer = await request(`${proxy.baseUrl}/v1/messages`, {
        method: 'POST',
        dispatcher,
        headers,
        body: JSON.stringify(replayed.body),
      })
      const text = await answer.body.text()
      // The newest request the fake upstream logged is this one as sent, unless this one never reached it.
      const sent = mock.requests.at(-1)
      counter.request(replayed.index, sent && sent.sequence > lastSequence ? sent.body : undefined)
      lastSequence = sent?.sequence ?? lastSequence
      outcomes.push(outcomeOf(replayed, answer.statusCode, answer.headers, text))
    }
    return variant.direct
      ? { outcomes }
      : { outcomes, ledger: await ledgerFigures(registry), refetches: await refetchFigures(registry) }
  } finally {
    await proxy.close()
    await mock.close()
    await dispatcher.close()
  }
}

/** ctxgate in front of the mock, with the variant's config and the window the mock enforces. */
async function startProxy(
  variant: Variant,
  options: ReplayOptions,
  mockUrl: string,
  registry: Registry,
): Promise<{ baseUrl: string; close: () => Promise<void> }> {
  const flags = variant.configFile ? { config: variant.configFile } : {}
  const base = loadConfig({ flags })
  // The replayed model gets the window the fake upstream enforces, whatever its name.
  const replayModel = {
    match: '*',
    window: options.window,
    budget: base.models.find((entry) => entry.match === '*')?.budget ?? 0.9,
    minCacheableTokens: options.minCacheableTokens,
    thinkingBoundToPrefix: false,
  }
  const config = loadConfig({
    flags,
    overrides: {
      server: { port: 0 },
      log: { level: 'silent' },
      // Every upstream of the registry's list goes to the one mock.
      upstreams: Object.fromEntries(upstreamIds.map((id) => [id, { url: mockUrl }])),
      models: [replayModel],
    },
  })
  const learned = options.learned?.get(variant.label)
  const store = learned ? learningStore(config, learned) : undefined
  const app = await buildApp({ config, logger: createLogger('silent'), registry, ...(store ? { store } : {}) })
  await app.server.listen({ host: '127.0.0.1', port: 0 })
  return {
    baseUrl: `http://127.0.0.1:${(app.server.server.address() as AddressInfo).port}`,
    close: async () => {
      await app.server.close()
      store?.finishRun()
    },
  }
}

function replayHeaders(variant: Variant, options: ReplayOptions): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'anthropic-version': '2023-06-01',
    'x-api-key': 'replay',
  }
  if (!variant.direct && options.budget !== undefined) headers['x-ctxgate-budget'] = String(options.budget)
  // ctxgate's own estimate comes back in its response headers, so a replay can tell which requests its floor left alone.
  if (!variant.direct) headers['x-ctxgate-debug'] = '1'
  return headers
}

/** One answer as the replay tables read it: the Messages answer, its segment, and ctxgate's batch and estimate. */
function outcomeOf(
  replayed: ReplayRequest,
  status: number,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  text: string,
): RequestOutcome {
  const outcome = readAnthropicAnswer(replayed.index, status, String(headers['content-type'] ?? ''), text)
  const estimate = Number(headers['x-ctxgate-estimate-after'])
  const batch = headers['x-ctxgate-edit'] === 'batch' ? { ctxgateBatch: true } : {}
  const seen = { ...outcome, segment: replayed.segment, ...batch }
  return Number.isFinite(estimate) && estimate > 0 ? { ...seen, ctxgateEstimate: estimate } : seen
}

function learningStore(config: Config, learned: ReplayedLengths): LearningStore {
  const { maxEntries, idleTtlMs, maxStateBytes, maxTotalBytes } = config.sessions
  return new LearningStore(new MemorySessionStore({ maxEntries, idleTtlMs, maxStateBytes, maxTotalBytes }), learned)
}

/** The ledger metric summed over reasons, by figure. */
async function ledgerFigures(registry: Registry): Promise<LedgerFigures> {
  const metric = await registry.getSingleMetric('ctxgate_economy_ledger_tokens_total')?.get()
  const figures: Record<string, number> = {}
  for (const { labels, value } of metric?.values ?? []) {
    const figure = String(labels['figure'])
    figures[figure] = (figures[figure] ?? 0) + value
  }
  return figures
}
