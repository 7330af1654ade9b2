import type { Readable } from 'node:stream'
import type { CtxgateError } from '../errors.ts'
import type { Prepared } from '../request/prepared.ts'
import type { Provider } from '../providers/provider-contract.ts'
import { upstreamRequestHeaders, type HeaderMap } from '../upstream/hop-by-hop.ts'
import type { ForwardInput, RequestNotes } from './forward-types.ts'

export type PreparedRequest =
  /** Ready to send: the body and headers to send upstream, and what the rewrite engine prepared. */
  | {
      readonly kind: 'ready'
      readonly body: Buffer | Readable | null
      readonly headers: HeaderMap
      readonly prepared?: Prepared
      readonly noted: RequestNotes
    }
  /** ctxgate answers itself, in the provider's shape, and does not call the upstream. */
  | { readonly kind: 'rejected'; readonly error: CtxgateError; readonly noted: RequestNotes }

/** The client's request made ready for the upstream; a failure to prepare it sends it unchanged (fail open). */
export async function prepareRequest(input: ForwardInput): Promise<PreparedRequest> {
  const { request } = input
  const headers = upstreamRequestHeaders(request.headers)
  const body = input.body
  if (!Buffer.isBuffer(body) || !input.prepare) {
    // A streamed body goes on with the length the client declared.
    if (body !== null && !Buffer.isBuffer(body) && request.headers['content-length'] !== undefined)
      headers['content-length'] = request.headers['content-length']
    return { kind: 'ready', body, headers, noted: {} }
  }
  try {
    const result = await input.prepare(body, request.headers, afterDispatch)
    if (result.kind === 'reject') {
      return { kind: 'rejected', error: result.error, noted: { log: result.log, accounting: result.accounting } }
    }
    const prepared = result.prepared
    mergeHeaders(headers, prepared.headers, input.provider)
    const noted = { log: prepared.log, accounting: prepared.accounting }
    return { kind: 'ready', body: prepared.body, headers, prepared, noted }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    return { kind: 'ready', body, headers, noted: { failOpen: 'prepare', error: message } }
  }
}

/** forward.ts makes a request's records right after dispatching it (records-after-dispatch.ts). */
const afterDispatch = { recordsAfterDispatch: true }

/** Sets ctxgate's headers; those the provider combines (a list of betas) are merged with the client's value. */
function mergeHeaders(headers: HeaderMap, added: Prepared['headers'], provider: Provider): void {
  for (const [name, value] of Object.entries(added ?? {})) {
    const existing = headers[name]
    const merge = provider.headerMerges?.[name]
    headers[name] = merge && existing !== undefined ? merge(String(existing), value) : value
  }
}
