/**
 * Where configuration values may come from besides the YAML files: environment variables and
 * command-line flags, each mapped to one path in the schema.
 */
import { upstreamIds, type UpstreamId } from '../providers/upstream-ids.ts'

export type ValueType = 'string' | 'integer' | 'nullable-integer' | 'nullable-string' | 'list' | 'boolean' | 'share'

export interface Setting {
  readonly path: readonly string[]
  readonly env: string
  readonly flag?: string
  readonly type: ValueType
  readonly description: string
}

/** Each upstream's name as `ctxgate --help` shows it (typed by the registry's list, so a new provider needs one). */
export const upstreamNames: Readonly<Record<UpstreamId, string>> = { anthropic: 'Anthropic', openai: 'OpenAI' }

/** How each upstream's URL setting is described. */
const upstreamUrlDescriptions: Readonly<Record<UpstreamId, string>> = {
  anthropic: 'Anthropic API origin (and optional path prefix).',
  openai: 'OpenAI API origin (and optional path prefix); ctxgate adds /v1.',
}

/** `upstreams.<id>.url` from `CTXGATE_<ID>_URL` or `--<id>-url`, for each upstream of the registry's list. */
function upstreamUrlSetting(id: UpstreamId): Setting {
  return {
    path: ['upstreams', id, 'url'],
    env: `CTXGATE_${id.toUpperCase()}_URL`,
    flag: `${id}-url`,
    type: 'string',
    description: upstreamUrlDescriptions[id],
  }
}

export const settings: readonly Setting[] = [
  {
    path: ['server', 'host'],
    env: 'CTXGATE_HOST',
    flag: 'host',
    type: 'string',
    description: 'Address to listen on (0.0.0.0 in the container).',
  },
  { path: ['server', 'port'], env: 'CTXGATE_PORT', flag: 'port', type: 'integer', description: 'Port to listen on.' },
  {
    path: ['server', 'bodyLimitBytes'],
    env: 'CTXGATE_BODY_LIMIT_BYTES',
    type: 'integer',
    description: 'Largest model request body accepted; larger ones get 413 without reaching the upstream.',
  },
  {
    path: ['server', 'shutdownGraceMs'],
    env: 'CTXGATE_SHUTDOWN_GRACE_MS',
    type: 'integer',
    description: 'How long in-flight streams may run after SIGTERM.',
  },
  {
    path: ['server', 'requestTimeoutMs'],
    env: 'CTXGATE_REQUEST_TIMEOUT_MS',
    type: 'integer',
    description: 'Most time a client may take to send a request (headers and body).',
  },
  {
    path: ['server', 'responseHeaders'],
    env: 'CTXGATE_RESPONSE_HEADERS',
    type: 'boolean',
    description: 'Add x-ctxgate-* headers saying what ctxgate did to each request.',
  },
  {
    path: ['server', 'allowedHosts'],
    env: 'CTXGATE_ALLOWED_HOSTS',
    type: 'list',
    description: 'Comma-separated host names the admin endpoints answer to without an admin token.',
  },
  {
    path: ['log', 'level'],
    env: 'CTXGATE_LOG_LEVEL',
    flag: 'log-level',
    type: 'string',
    description: 'pino level: fatal, error, warn, info, debug, trace or silent.',
  },
  ...upstreamIds.map(upstreamUrlSetting),
  {
    path: ['upstream', 'connectTimeoutMs'],
    env: 'CTXGATE_CONNECT_TIMEOUT_MS',
    type: 'integer',
    description: 'TCP + TLS connect timeout.',
  },
  {
    path: ['upstream', 'headersTimeoutMs'],
    env: 'CTXGATE_HEADERS_TIMEOUT_MS',
    type: 'integer',
    description: 'Time allowed until the upstream sends response headers.',
  },
  {
    path: ['upstream', 'bodyTimeoutMs'],
    env: 'CTXGATE_BODY_TIMEOUT_MS',
    type: 'integer',
    description: 'Longest silence allowed between two response chunks.',
  },
  {
    path: ['retry', 'maxAttempts'],
    env: 'CTXGATE_RETRY_MAX_ATTEMPTS',
    type: 'integer',
    description: 'Upstream attempts per request before the first byte (1 = no retries).',
  },
  {
    path: ['retry', 'maxTotalWaitMs'],
    env: 'CTXGATE_RETRY_MAX_TOTAL_WAIT_MS',
    type: 'integer',
    description: 'Most time spent waiting between attempts of one request.',
  },
  {
    path: ['sessions', 'redisUrl'],
    env: 'CTXGATE_REDIS_URL',
    flag: 'redis-url',
    type: 'nullable-string',
    description: 'Share sessions across replicas through this Redis.',
  },
  {
    path: ['metrics', 'port'],
    env: 'CTXGATE_METRICS_PORT',
    flag: 'metrics-port',
    type: 'nullable-integer',
    description: 'Serve /metrics on a separate port.',
  },
  {
    path: ['metrics', 'host'],
    env: 'CTXGATE_METRICS_HOST',
    flag: 'metrics-host',
    type: 'string',
    description: 'Address of the separate metrics listener (loopback by default).',
  },
  {
    path: ['sessions', 'storeBudgetMs'],
    env: 'CTXGATE_STORE_BUDGET_MS',
    type: 'integer',
    description: 'Most time the Redis store may add to one request.',
  },
  {
    path: ['metrics', 'token'],
    env: 'CTXGATE_ADMIN_TOKEN',
    type: 'nullable-string',
    description: 'Bearer token required on /metrics and /ctxgate/sessions.',
  },
  {
    path: ['rewrite', 'holdout'],
    env: 'CTXGATE_HOLDOUT',
    type: 'share',
    description: 'Share of sessions (0 to 1) forwarded untouched as a control arm (docs/holdout.md).',
  },
  {
    path: ['auth', 'tokens'],
    env: 'CTXGATE_AUTH_TOKENS',
    type: 'list',
    description: 'Comma-separated client tokens, sent as x-ctxgate-auth.',
  },
]

/** Turns a raw string into the value the schema expects, or explains why it can't. */
export function parseSettingValue(setting: Setting, raw: string): { value: unknown } | { problem: string } {
  if (setting.type === 'string') return { value: raw }
  if (setting.type === 'boolean') return parseSwitch(raw)
  if (setting.type === 'list')
    return {
      value: raw
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean),
    }
  if (setting.type === 'share')
    return /^\s*(0|1|0?\.\d+|1\.0*)\s*$/.test(raw)
      ? { value: Number(raw.trim()) }
      : { problem: `expected a share from 0 to 1 (such as 0.2), got ${JSON.stringify(raw)}` }
  if (setting.type === 'nullable-string') return { value: raw === '' || raw === 'null' || raw === 'off' ? null : raw }
  if (setting.type === 'nullable-integer' && (raw === '' || raw === 'null' || raw === 'off')) return { value: null }
  if (/^-?\d+$/.test(raw.trim())) return { value: Number(raw.trim()) }
  return { problem: `expected a whole number, got ${JSON.stringify(raw)}` }
}

const switchValues = new Map<string, boolean>([
  ...['true', 'on', 'yes', '1'].map((word) => [word, true] as const),
  ...['false', 'off', 'no', '0'].map((word) => [word, false] as const),
])

function parseSwitch(raw: string): { value: boolean } | { problem: string } {
  const value = switchValues.get(raw.trim().toLowerCase())
  return value === undefined
    ? { problem: `expected true or false (or on/off, yes/no, 1/0), got ${JSON.stringify(raw)}` }
    : { value }
}
