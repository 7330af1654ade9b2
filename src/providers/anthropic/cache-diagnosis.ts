import { cacheMissReasons, type CacheDiagnosis, type CacheMissReason } from '../../model-call/cache-diagnosis.ts'
import type { AnsweredRequest } from '../../model-call/usage.ts'
import { isJsonObject } from '../../util/json.ts'

/** The beta that makes the Messages API say why a request missed the cache (any dated version of it). */
const diagnosisBetaPrefix = 'cache-diagnosis-'

/** Reasons the API names in `diagnostics.cache_miss_reason.type`; any other is counted as `other`. */
const knownReasons: ReadonlySet<string> = new Set<CacheMissReason>(
  cacheMissReasons.filter((reason) => reason !== 'none' && reason !== 'pending' && reason !== 'other'),
)

/**
 * The client itself asked for a diagnosis against a previous message: it sent the beta and named
 * the message in `diagnostics.previous_message_id`. Only then does the answer's `diagnostics`
 * (null included) say anything, since the API may send `diagnostics: null` on every answer.
 */
export function asksCacheDiagnosis(request: AnsweredRequest | undefined): boolean {
  if (!request) return false
  const diagnostics = request.body['diagnostics']
  if (!isJsonObject(diagnostics) || typeof diagnostics['previous_message_id'] !== 'string') return false
  const betas = request.headers['anthropic-beta']
  const list = Array.isArray(betas) ? betas.join(',') : (betas ?? '')
  return list.split(',').some((beta) => beta.trim().startsWith(diagnosisBetaPrefix))
}

/**
 * The `diagnostics` of a message (an answer, or a stream's message_start): null means no divergence
 * was found; a null `cache_miss_reason` means the API answered before its comparison finished.
 * Undefined when the message has no such field (the API did not diagnose).
 */
export function readCacheDiagnosis(message: Readonly<Record<string, unknown>>): CacheDiagnosis | undefined {
  if (!('diagnostics' in message)) return undefined
  const diagnostics = message['diagnostics']
  if (diagnostics === null) return { reason: 'none' }
  if (!isJsonObject(diagnostics)) return { reason: 'other' }
  const reason = diagnostics['cache_miss_reason']
  if (reason === null || reason === undefined) return { reason: 'pending' }
  if (!isJsonObject(reason)) return { reason: 'other' }
  const type = reason['type']
  const named: CacheMissReason =
    typeof type === 'string' && knownReasons.has(type) ? (type as CacheMissReason) : 'other'
  const missed = reason['cache_missed_input_tokens']
  return typeof missed === 'number' && Number.isFinite(missed)
    ? { reason: named, missedTokens: missed }
    : { reason: named }
}
