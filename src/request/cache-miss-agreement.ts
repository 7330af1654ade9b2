import type { CacheMissReason } from '../model-call/cache-diagnosis.ts'
import type { Usage } from '../model-call/usage.ts'
import type { PrefixBreak } from '../rewrite/prefix-break.ts'
import type { Accounting } from './prepared.ts'

/** Whether ctxgate's own cause for a prefix break matches the provider's diagnosis; unknown when the provider could not say. */
export type CacheMissAgreement = 'yes' | 'no' | 'unknown'

/** What ctxgate itself concluded about the request. */
export interface OwnAttribution {
  /** ctxgate's cause for the break, or undefined when it saw the prefix hold. */
  readonly prefixBreak?: PrefixBreak | undefined
  /** ctxgate made a new batch of edits on this request. */
  readonly newBatch: boolean
}

const promptChanges: ReadonlySet<CacheMissReason> = new Set([
  'model_changed',
  'tools_changed',
  'system_changed',
  'messages_changed',
])
/** ctxgate edits messages, and its system note joins the system prompt with its first batch. */
const ownEditChanges: ReadonlySet<CacheMissReason> = new Set(['system_changed', 'messages_changed'])
/** The client may rewrite anything it sends but the model name. */
const clientChanges: ReadonlySet<CacheMissReason> = new Set(['tools_changed', 'system_changed', 'messages_changed'])

/** Reasons under which the provider matches each cause of ctxgate's (a missing cause means the prefix held). */
function agreeingReasons(own: OwnAttribution): ReadonlySet<CacheMissReason> {
  switch (own.prefixBreak) {
    case undefined:
      return new Set(['none'])
    case 'model_changed':
      return new Set(['model_changed'])
    case 'client_edit':
      return clientChanges
    case 'ctxgate_batch':
      return ownEditChanges
    // An expired entry is no change to the prompt, unless ctxgate used the cold cache to make a batch.
    case 'ttl_expired':
      return own.newBatch ? ownEditChanges : new Set(['none'])
  }
}

export function cacheMissAgreement(reason: CacheMissReason, own: OwnAttribution): CacheMissAgreement {
  if (reason !== 'none' && !promptChanges.has(reason)) return 'unknown'
  return agreeingReasons(own).has(reason) ? 'yes' : 'no'
}

/** The label pairs that can occur, so each series exists from the first scrape. */
export const cacheMissLabelPairs: readonly (readonly [CacheMissReason, CacheMissAgreement])[] = [
  ['none', 'yes'],
  ['none', 'no'],
  ...[...promptChanges].flatMap((reason) => [[reason, 'yes'] as const, [reason, 'no'] as const]),
  ['pending', 'unknown'],
  ['previous_message_not_found', 'unknown'],
  ['unavailable', 'unknown'],
  ['other', 'unknown'],
]

/** The provider's reason for a cache miss and ctxgate's agreement with it: for the metric and the log line. */
export function cacheMissSummary(usage: Usage | undefined, accounting: Accounting | undefined) {
  const diagnosis = usage?.cacheDiagnosis
  if (!diagnosis) return undefined
  const own = { prefixBreak: accounting?.prefixBreak, newBatch: accounting?.report?.newBatch === true }
  return { ...diagnosis, agrees: cacheMissAgreement(diagnosis.reason, own) }
}
