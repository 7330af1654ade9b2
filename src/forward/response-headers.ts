import type { IncomingHttpHeaders } from 'node:http'
import type { Accounting } from '../request/prepared.ts'
import type { RewriteReport } from '../rewrite/types.ts'
import { firstHeader } from '../util/headers.ts'

/** What the edit on this request was: nothing, a new batch, frozen edits re-applied, or a re-plan after a length refusal. */
export type EditKind = 'none' | 'batch' | 'reapplied' | 'refit'

/** Header name to value: one value each. */
export type OwnHeaders = Record<string, string>

/** What ctxgate knows about one request before the upstream's answer is relayed. */
export interface RequestDescription {
  readonly accounting?: Accounting | undefined
  /** The request's log fields: `rewrite` is the report, or the word saying why the request went on as sent. */
  readonly log?: Readonly<Record<string, unknown>> | undefined
  /** Preparing the request threw and the client's bytes went on unchanged. */
  readonly failOpen?: string | undefined
  /** The upstream refused the first request for its length and a re-planned one was sent instead. */
  readonly refitted?: boolean | undefined
  /** ctxgate answered itself: even the smallest request it could make did not fit. */
  readonly refused?: boolean | undefined
}

const turnedOn = new Set(['1', 'true', 'on', 'yes'])
const turnedOff = new Set(['0', 'false', 'off', 'no'])

/** `x-ctxgate-debug` decides for its own request; without it (or with a value it doesn't know) the setting does. */
export function responseHeadersWanted(enabled: boolean, incoming: IncomingHttpHeaders): boolean {
  const asked = firstHeader(incoming['x-ctxgate-debug'])?.trim().toLowerCase()
  if (asked !== undefined && turnedOn.has(asked)) return true
  if (asked !== undefined && turnedOff.has(asked)) return false
  return enabled
}

/**
 * The `x-ctxgate-*` headers that tell a client what ctxgate did to its request, or undefined when
 * not wanted. Only this request's own numbers and its own session id: never a key or a body.
 */
export function ownResponseHeaders(
  enabled: boolean,
  incoming: IncomingHttpHeaders,
  request: RequestDescription,
): OwnHeaders | undefined {
  if (!responseHeadersWanted(enabled, incoming)) return undefined
  return describeRequest(request)
}

/** The header map for one request (pure: the same description always gives the same headers). */
export function describeRequest(request: RequestDescription): OwnHeaders {
  const headers: OwnHeaders = { 'x-ctxgate-rewrite': rewriteStatus(request) }
  const sessionId = request.accounting?.sessionId
  if (sessionId !== undefined) headers['x-ctxgate-session'] = headerSafe(sessionId)
  const report = request.accounting?.report
  if (!report) return headers
  headers['x-ctxgate-budget'] = String(report.budget)
  headers['x-ctxgate-estimate-before'] = String(report.estimatedBefore)
  headers['x-ctxgate-estimate-after'] = String(report.estimatedAfter)
  headers['x-ctxgate-tokens-removed'] = String(tokensRemoved(report))
  headers['x-ctxgate-edit'] = editKind(report, request.refitted === true)
  return headers
}

/** `rewritten`, `refused`, `failed-open`, or the log line's word for why the request went on as sent. */
function rewriteStatus(request: RequestDescription): string {
  if (request.refused) return 'refused'
  if (request.failOpen !== undefined) return 'failed-open'
  if (request.accounting?.report) return 'rewritten'
  const reason = request.log?.['rewrite']
  // No rewrite hook ran at all: a route that carries no chat (models list, files, token counts…).
  return typeof reason === 'string' ? reason : 'not-a-chat-request'
}

function editKind(report: RewriteReport, refitted: boolean): EditKind {
  if (refitted) return 'refit'
  if (report.newBatch) return 'batch'
  return report.firstEditedMessage >= 0 ? 'reapplied' : 'none'
}

function tokensRemoved(report: RewriteReport): number {
  const { fold, clear, drop } = report.tokensRemoved
  return fold + clear + drop
}

/** Printable ASCII goes as is; anything else (a user id with spaces, newlines or accents) is percent-encoded. */
function headerSafe(value: string): string {
  return /^[\x21-\x7e]*$/.test(value) ? value : encodeURIComponent(value)
}
