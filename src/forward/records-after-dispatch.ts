import { afterTheRequestIsWritten } from './after-request-written.ts'
import type { Prepared } from '../request/prepared.ts'
import type { RequestNotes } from './forward-types.ts'
import type { PreparedRequest } from './prepare-request.ts'
import type { SentRequest } from './send-upstream.ts'

/**
 * Waits for the upstream call and, meanwhile, makes the records of a request the hook sent before
 * them (`Prepared.afterDispatch`): call it right after the body is dispatched; they start once the
 * dispatcher has written it. Both are done before
 * anything reads the records or writes to the client (headers, error, log line, metrics), so they
 * come out as if made before dispatch. Records that fail leave the request as a failed preparation
 * would have: sent unchanged, with no rewrite records.
 */
export async function recordsAfterDispatch(
  ready: Extract<PreparedRequest, { kind: 'ready' }>,
  sending: Promise<SentRequest>,
): Promise<{ readonly noted: RequestNotes; readonly sent: SentRequest }> {
  const early = ready.prepared
  if (early?.afterDispatch === undefined) return { noted: ready.noted, sent: await sending }
  // undici writes a request on a reused keep-alive socket from a setImmediate (it checks the idle
  // socket first): the records start from the next one, so the bytes go out before they run.
  const records = afterTheRequestIsWritten().then(early.afterDispatch).then(madeRecords, failedRecords)
  // Both are awaited together: neither promise is ever left without a handler while the other runs.
  const [recorded, sent] = await Promise.all([records, sending])
  const noted = recorded.prepared
    ? { ...ready.noted, log: recorded.prepared.log, accounting: recorded.prepared.accounting }
    : { failOpen: 'prepare', error: recorded.error }
  // A refit's own prepared is already whole; the first one is replaced by itself with its records.
  if (sent.kind !== 'replied' || sent.prepared !== early) return { noted, sent }
  return { noted, sent: { ...sent, prepared: recorded.prepared } }
}

function madeRecords(prepared: Prepared): { readonly prepared: Prepared; readonly error?: undefined } {
  return { prepared }
}

function failedRecords(error: unknown): { readonly prepared?: undefined; readonly error: string } {
  return { error: error instanceof Error ? error.message : String(error) }
}
