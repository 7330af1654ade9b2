import { z } from 'zod'

const port = z.number().int().min(0).max(65_535)
const millis = z.number().int().min(0)
const httpUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
  .refine((value) => !URL.canParse(value) || (!new URL(value).search && !new URL(value).hash), 'must not carry a query or fragment')

const upstreamSchema = z.strictObject({
  /** Origin plus optional path prefix; ctxgate appends the request path. */
  url: httpUrl,
})

export const configSchema = z.strictObject({
  server: z.strictObject({
    host: z.string().min(1),
    port,
    /** Largest request body ctxgate reads; the Messages API refuses more than 32 MB (model-apis §5.1). */
    bodyLimitBytes: z.number().int().min(1024),
    /** On SIGTERM, how long in-flight requests and streams may take before the process exits. */
    shutdownGraceMs: millis,
  }),
  log: z.strictObject({
    level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  }),
  upstreams: z.strictObject({
    anthropic: upstreamSchema,
    openai: upstreamSchema,
  }),
  upstream: z.strictObject({
    connectTimeoutMs: millis,
    /** Time to response headers; non-streaming calls may think for up to 10 minutes (model-apis §5.3). */
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
  metrics: z.strictObject({
    /** Serve /metrics on its own port instead of the proxy port; null keeps it on the proxy port. */
    port: port.nullable(),
  }),
})

export type Config = z.infer<typeof configSchema>
