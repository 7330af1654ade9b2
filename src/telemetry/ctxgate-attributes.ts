import type { Attributes } from '@opentelemetry/api'
import type { CallFacts } from './exported-call.ts'

/**
 * What ctxgate did to the request, beside the GenAI attributes: the rewrite report (its token
 * counts are ctxgate's estimates, hence the names), the batch, refit and fail-open, the session's
 * kind and, when a holdout runs, the arm the session is in.
 */
export function ctxgateAttributes(record: CallFacts): Attributes {
  const attributes: Attributes = {
    'ctxgate.route': record.route,
    'ctxgate.outcome': record.outcome,
    'ctxgate.upstream.attempts': record.attempts,
  }
  if (record.retries.length > 0) attributes['ctxgate.upstream.retries'] = record.retries.length
  if (record.failOpen) attributes['ctxgate.rewrite.fail_open'] = record.failOpen
  if (record.refitted) attributes['ctxgate.rewrite.refit'] = true
  const accounting = record.accounting
  if (!accounting) return attributes
  const report = accounting.report
  if (report) {
    attributes['ctxgate.rewrite.estimated_before'] = report.estimatedBefore
    attributes['ctxgate.rewrite.estimated_after'] = report.estimatedAfter
    attributes['ctxgate.rewrite.budget'] = report.budget
    attributes['ctxgate.rewrite.tokens_removed.fold'] = report.tokensRemoved.fold
    attributes['ctxgate.rewrite.tokens_removed.clear'] = report.tokensRemoved.clear
    attributes['ctxgate.rewrite.tokens_removed.drop'] = report.tokensRemoved.drop
    if (report.tokensRemoved.input !== undefined)
      attributes['ctxgate.rewrite.tokens_removed.input'] = report.tokensRemoved.input
    attributes['ctxgate.rewrite.new_batch'] = report.newBatch
    if (report.firstNewEdit >= 0) attributes['ctxgate.rewrite.edit_point'] = report.firstNewEdit
    if (report.firstEditedMessage >= 0) attributes['ctxgate.rewrite.first_edited_message'] = report.firstEditedMessage
  }
  if (accounting.batchReason) attributes['ctxgate.rewrite.batch_reason'] = accounting.batchReason
  if (accounting.breakpointsPlaced !== undefined)
    attributes['ctxgate.rewrite.breakpoints_placed'] = accounting.breakpointsPlaced
  if (accounting.refusalAvoided) attributes['ctxgate.rewrite.refusal_avoided'] = true
  if (accounting.prefixBreak) attributes['ctxgate.cache.prefix_break'] = accounting.prefixBreak
  if (accounting.kind) attributes['ctxgate.session.kind'] = accounting.kind
  if (accounting.arm) attributes['ctxgate.holdout.arm'] = accounting.arm
  const missReason = record.usage?.cacheDiagnosis?.reason
  if (missReason) attributes['ctxgate.cache.miss_reason'] = missReason
  return attributes
}
