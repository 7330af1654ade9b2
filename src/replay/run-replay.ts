import type { AddressInfo } from 'node:net'
import { Registry } from 'prom-client'
import { Agent, request } from 'undici'
import { buildApp } from '../app.ts'
import { loadConfig } from '../config/load-config.ts'
import { createLogger } from '../log/logger.ts'
import { startMockServer } from '../mock/server.ts'
import { buildAnthropicRequests, type ClientCache, type ReplayRequest } from './build-requests.ts'
import type { Conversation } from './conversation.ts'
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
  readonly stream: boolean
  /** Sent as x-ctxgate-budget to ctxgate variants. */
  readonly budget?: number
  readonly variants: readonly Variant[]
}

export interface RunResult {
  readonly id: string
  readonly source: string
  readonly notes: readonly string[]
  readonly outcomes: Readonly<Record<string, readonly RequestOutcome[]>>
  readonly summaries: Readonly<Record<string, RunSummary>>
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
  const outcomes: Record<string, RequestOutcome[]> = {}
  for (const variant of options.variants) outcomes[variant.label] = await sendThrough(variant, requests, options)
  const direct = outcomes[directLabel]
  const summaries: Record<string, RunSummary> = {}
  for (const [label, list] of Object.entries(outcomes))
    summaries[label] = summarize(list, label === directLabel ? undefined : direct)
  return { id: conversation.id, source: conversation.source, notes: conversation.notes, outcomes, summaries }
}

async function sendThrough(
  variant: Variant,
  requests: readonly ReplayRequest[],
  options: ReplayOptions,
): Promise<RequestOutcome[]> {
  const mock = await startMockServer({
    window: options.window,
    minCacheableTokens: options.minCacheableTokens,
    logLimit: 1,
    // Replay's --window bounds the prompt alone, as every replay table so far was measured; the
    // reply's room is a replay setting (--max-tokens), not what the agent asked for.
    replyRoomInWindow: false,
  })
  const dispatcher = new Agent({ keepAliveTimeout: 10_000, headersTimeout: 600_000, bodyTimeout: 600_000 })
  let baseUrl = mock.url
  let close: () => Promise<void> = noop
  if (!variant.direct) {
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
        upstreams: { anthropic: { url: mock.url }, openai: { url: mock.url } },
        models: [replayModel],
      },
    })
    const app = await buildApp({ config, logger: createLogger('silent'), registry: new Registry() })
    await app.server.listen({ host: '127.0.0.1', port: 0 })
    baseUrl = `http://127.0.0.1:${(app.server.server.address() as AddressInfo).port}`
    close = () => app.server.close()
  }
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'anthropic-version': '2023-06-01',
    'x-api-key': 'replay',
  }
  if (!variant.direct && options.budget !== undefined) headers['x-ctxgate-budget'] = String(options.budget)
  // ctxgate's own estimate comes back in its response headers, so a replay can tell which requests its floor left alone.
  if (!variant.direct) headers['x-ctxgate-debug'] = '1'
  try {
    const outcomes: RequestOutcome[] = []
    for (const replayed of requests) {
      const answer = await request(`${baseUrl}/v1/messages`, {
        method: 'POST',
        dispatcher,
        headers,
        body: JSON.stringify(replayed.body),
      })
      const text = await answer.body.text()
      const outcome = readAnthropicAnswer(
        replayed.index,
        answer.statusCode,
        String(answer.headers['content-type'] ?? ''),
        text,
      )
      const estimate = Number(answer.headers['x-ctxgate-estimate-after'])
      outcomes.push(Number.isFinite(estimate) && estimate > 0 ? { ...outcome, ctxgateEstimate: estimate } : outcome)
    }
    return outcomes
  } finally {
    await close()
    await mock.close()
    await dispatcher.close()
  }
}
