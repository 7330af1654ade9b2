import { z } from 'zod'
import { upstreamIds, type UpstreamId } from '../providers/upstream-ids.ts'

const port = z.number().int().min(0).max(65_535)
const millis = z.number().int().min(0)
const httpUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
  .refine(
    (value) => !URL.canParse(value) || (!new URL(value).search && !new URL(value).hash),
    'must not carry a query or fragment',
  )

const upstreamSchema = z.strictObject({
  /**
   * Origin plus optional path prefix; ctxgate appends the request path, which already starts with
   * /v1, so a URL written the SDK way (ending in /v1, as vLLM, Ollama and LiteLLM document theirs)
   * loses that /v1 here instead of becoming /v1/v1.
   */
  url: httpUrl.transform(withoutTrailingVersion),
})

export function withoutTrailingVersion(url: string): string {
  return url.replace(/\/+$/, '').replace(/\/v1$/, '')
}

/** Dollars per million tokens (null: unknown); cache prices as multiples of the input price. */
const priceSchema = z.strictObject({
  /** Glob on the request's model name; the first match wins. */
  match: z.string().min(1),
  input: z.number().min(0).nullable(),
  output: z.number().min(0).nullable(),
  cacheWrite5m: z.number().min(0),
  cacheWrite1h: z.number().min(0),
  cacheRead: z.number().min(0),
})

/** The cache-priced economy: edits below budget only when they pay, never past the quality floor. */
const economySchema = z.strictObject({
  prices: z.array(priceSchema),
  /** Below-budget edits start only once a request is this many tokens (the provider's own context editing starts at 100k). */
  startTokens: z.number().int().min(0),
  /** The newest N tool rounds always stay whole. */
  keepRecentRounds: z.number().int().min(0),
  /** Results of these tools are never cleared or folded below budget. */
  excludeTools: z.array(z.string().min(1)),
  /** Sessions with fewer requests than this are never edited below budget. */
  shortSessionRequests: z.number().int().min(0),
  /** Below budget, results the agent needs again more often than this per request stay whole (docs/quality.md). */
  maxNeedHazard: z.number().min(0).max(1),
  /** A below-budget batch must pay back within the remaining length the session reaches with probability 1 − this (docs/economy.md). */
  forecastQuantile: z.number().gt(0).lt(1),
})

const modelSchema = z.strictObject({
  /** Glob on the request's model name (`*` any run of characters); the first match wins. */
  match: z.string().min(1),
  /** Context window in tokens. */
  window: z.number().int().positive(),
  /** Tokens ctxgate keeps prompts under: a fraction of the window (≤ 1) or an absolute count; max_tokens comes off too. */
  budget: z.number().positive(),
  /** Shortest prefix the provider caches; no breakpoint goes on a shorter one. */
  minCacheableTokens: z.number().int().min(0),
  /** The provider binds thinking signatures to the prefix they were written after (Claude Fable 5.1 and later). */
  thinkingBoundToPrefix: z.boolean(),
})

export type ModelLimits = z.infer<typeof modelSchema>

export const configSchema = z.strictObject({
  server: z.strictObject({
    host: z.string().min(1),
    port,
    /** Largest request body ctxgate reads; the Messages API itself refuses more than 32 MB. */
    bodyLimitBytes: z.number().int().min(1024),
    /** On SIGTERM, how long in-flight requests and streams may take before the process exits. */
    shutdownGraceMs: millis,
    /** Most time a client may take to send one request's headers and body (answers are not bounded by it). */
    requestTimeoutMs: z.number().int().min(100),
    /** Add x-ctxgate-* headers saying what ctxgate did to each request (a request can ask with x-ctxgate-debug). */
    responseHeaders: z.boolean(),
    /**
     * Host names (besides loopback names and IP literals) the admin endpoints answer to when no admin
     * token is set: a DNS-rebinding page reaches them under its own name, which this list refuses.
     */
    allowedHosts: z.array(z.string().min(1)),
  }),
  log: z.strictObject({
    level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  }),
  /** One section per upstream of the provider registry's list. */
  upstreams: z.strictObject(
    Object.fromEntries(upstreamIds.map((id) => [id, upstreamSchema])) as Record<UpstreamId, typeof upstreamSchema>,
  ),
  upstream: z.strictObject({
    connectTimeoutMs: millis,
    /** Time to response headers; the SDKs let a non-streaming call run for up to 10 minutes. */
    headersTimeoutMs: millis,
    /** Longest silence between two body chunks. */
    bodyTimeoutMs: millis,
    keepAliveTimeoutMs: millis,
    connectionsPerOrigin: z.number().int().min(1).nullable(),
  }),
  retry: z.strictObject({
    /** Upstream attempts per request, the first included; 1 turns retries off. */
    maxAttempts: z.number().int().min(1).max(10),
    baseDelayMs: millis,
    maxDelayMs: millis,
    /** Total time ctxgate may spend waiting between attempts of one request. */
    maxTotalWaitMs: millis,
  }),
  rewrite: z.strictObject({
    /** Off: every model call is forwarded as sent (requests can also opt out with x-ctxgate-mode: passthrough). */
    enabled: z.boolean(),
    strategy: z.enum(['clear-only', 'batched-fold', 'eager-fold']),
    /** Folding never touches the newest N tool rounds. */
    keepRecentRounds: z.number().int().min(0),
    /** Outputs smaller than this many tokens are never folded. */
    foldMinTokens: z.number().int().min(0),
    /** Results cleared per step of a batch. */
    clearBatch: z.number().int().min(1),
    /** When over budget, cut down to this fraction of it in one batch. */
    lowWater: z.number().gt(0).max(1),
    /**
     * When over budget, also clear the long strings of old tool calls' inputs (docs/quality.md, "Old
     * tool inputs"): `superseded` only those of writes whose file a later call writes again, true all.
     */
    clearToolInputs: z.union([z.boolean(), z.literal('superseded')]),
    /** When over budget, fold a file read the cut would clear to the lines the agent is likely to quote (docs/quality.md). */
    foldReads: z.boolean(),
    /** Tell the model, in the system prompt, that old tool results may be cleared and it should keep going. */
    systemNote: z.boolean(),
    /**
     * Where and when the note joins: `auto` at the first edit, right after the edited tool results
     * where the wire format allows a message there (OpenAI), else at the head; `head` at the first
     * edit, at the head; `first-request` at the head from a conversation's first request.
     */
    systemNotePlacement: z.enum(['auto', 'head', 'first-request']),
    /** cache-priced: also edit below budget when the edit pays for its cache rewrite; budget-only: only when over budget. */
    economy: z.enum(['cache-priced', 'budget-only']),
    /** Share of sessions forwarded as sent, never edited, as a control arm to compare bills with (docs/holdout.md). */
    holdout: z.number().min(0).max(1),
    /** Count each Claude (non-OpenAI) prompt by the cl100k vocabulary too, to size new content by it (docs/estimates.md). */
    referenceCount: z.boolean(),
  }),
  models: z.array(modelSchema).min(1),
  economy: economySchema,
  sessions: z.strictObject({
    /** Conversations whose frozen decisions are kept in memory (least recently used go first). */
    maxEntries: z.number().int().min(1),
    /** A conversation idle this long is forgotten. */
    idleTtlMs: z.number().int().min(1_000),
    /** Share sessions across replicas through Redis (redis:// or rediss:// URL); null keeps them in memory. */
    redisUrl: z
      .string()
      .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
      .nullable(),
    /** Prefix of every Redis key ctxgate writes. */
    redisKeyPrefix: z.string().min(1),
    /** Largest stored state of one conversation, in bytes. */
    maxStateBytes: z.number().int().min(1_024),
    /** Most bytes the in-memory store holds across all conversations; least recently used go first. */
    maxTotalBytes: z.number().int().min(1_024),
    /** Most time the Redis store may add to one request; each of its (at most four) round trips gets a quarter. */
    storeBudgetMs: z.number().int().min(4),
    /** Consecutive Redis failures or timeouts after which ctxgate stops calling it for a cool-down. */
    breakerThreshold: z.number().int().min(1),
    /** How long Redis is skipped once the breaker opened; then one request probes it. */
    breakerCooldownMs: z.number().int().min(100),
  }),
  metrics: z.strictObject({
    /** Serve /metrics on its own port instead of the proxy port; null keeps it on the proxy port. */
    port: port.nullable(),
    /** Address of that separate listener; loopback by default, 0.0.0.0 for a scraper on the network. */
    host: z.string().min(1),
    /** When set, /metrics and /ctxgate/sessions need `authorization: Bearer <token>`. */
    token: z.string().min(16, 'must be at least 16 characters').nullable(),
  }),
  live: z.strictObject({
    /** /ctxgate/events streams open at once; more get 503. */
    maxStreams: z.number().int().min(1),
    /** Bytes written to all /ctxgate/events streams and not yet taken by their readers (snapshots included). */
    maxBufferedBytes: z.number().int().min(65_536),
    /** A stream that delivered nothing but heartbeats for this long is ended (the page reconnects). */
    idleTimeoutMs: z.number().int().min(1_000),
  }),
  websocket: z.strictObject({
    /** In-memory size of the Responses conversations kept across all sockets; past it a socket is forwarded as sent. */
    maxHistoryBytes: z.number().int().min(0),
    /**
     * Large client messages received and not yet prepared (and the conversations they continue), across
     * all sockets: at most this many bytes are prepared at once, and every socket stops reading while
     * this many wait (docs/memory-budgets.md).
     */
    maxPreparingBytes: z.number().int().min(1_048_576),
  }),
  rewriteWorkers: z.strictObject({
    /** Worker threads that rewrite large bodies; 0 rewrites every body on the main thread. */
    threads: z.number().int().min(0).max(64),
    /** Bodies of this many bytes or more are parsed, planned and written out in a worker (docs/memory-budgets.md). */
    aboveBytes: z.number().int().min(0),
    /** Bytes of bodies waiting for a worker or in one; past it a body gets a 503 (one larger still runs alone). */
    maxQueuedBytes: z.number().int().min(1_048_576),
    /** A job that takes longer has its worker ended; the body goes on as the client sent it. */
    timeoutMs: z.number().int().min(100),
    /** A worker idle this long is ended, so the heap it grew to goes back to the system; the next large body starts one. */
    idleMs: z.number().int().min(100),
    /** Each worker's V8 heap; a worker that needs more is ended and its body goes on as sent (docs/memory-budgets.md). */
    maxHeapBytes: z.number().int().min(33_554_432),
  }),
  auth: z.strictObject({
    /** When non-empty, every proxied request needs `x-ctxgate-auth: <one of these>` (never forwarded). */
    tokens: z.array(z.string().min(16, 'each token must be at least 16 characters')),
  }),
})

export type Config = z.infer<typeof configSchema>
