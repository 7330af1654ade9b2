/**
 * Why the provider itself says a request could not reuse the cached prefix of the request it named
 * as its previous one: `none` (it found no divergence), `pending` (its comparison had not finished
 * when it answered), the first part of the prompt that changed, the named request unknown to it,
 * no diagnosis possible, or `other` for a reason this version does not know.
 */
export type CacheMissReason =
  | 'none'
  | 'pending'
  | 'model_changed'
  | 'tools_changed'
  | 'system_changed'
  | 'messages_changed'
  | 'previous_message_not_found'
  | 'unavailable'
  | 'other'

export const cacheMissReasons: readonly CacheMissReason[] = [
  'none',
  'pending',
  'model_changed',
  'tools_changed',
  'system_changed',
  'messages_changed',
  'previous_message_not_found',
  'unavailable',
  'other',
]

/** The provider's diagnosis of one answer, for a request whose client asked for it. */
export interface CacheDiagnosis {
  readonly reason: CacheMissReason
  /** The provider's estimate of the tokens that would have been read from cache had the prefix held. */
  readonly missedTokens?: number
}
