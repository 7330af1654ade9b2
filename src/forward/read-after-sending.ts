import { afterTheRequestIsWritten } from './after-request-written.ts'
import type { IncomingHttpHeaders } from 'node:http'
import type { Config } from '../config/schema.ts'
import { asksForPassthrough } from '../request/passthrough-mode.ts'
import { upstreamRequestHeaders } from '../upstream/hop-by-hop.ts'
import type { ForwardInput, RequestNotes } from './forward-types.ts'
import { prepareRequest, type PreparedRequest } from './prepare-request.ts'
import type { SentRequest } from './send-upstream.ts'

/**
 * Which bodies go upstream before the rewrite hook reads them. With rewriting off, or with the client
 * asking for passthrough (`x-ctxgate-mode: passthrough`), the hook only reads a body it parses on this
 * thread (the log line's reason, the model, the usage reader): it never changes the bytes or headers
 * sent and never refuses (test/property/read-after-sending.property.test.ts), so its 0.05–0.1 ms of
 * parsing can run while the upstream works instead of before the request leaves. A body for the
 * rewrite workers is read first as before: their queue refuses bodies (503) when it is full.
 * Undefined when the hook is not ctxgate's own.
 */
export function readAfterSendingFor(
  config: Pick<Config, 'rewrite' | 'rewriteWorkers'>,
  { ownHook }: { readonly ownHook: boolean },
): ((bodyBytes: number, incoming: IncomingHttpHeaders) => boolean) | undefined {
  // Only ctxgate's own hook is known to leave a body as sent with rewriting off (tests may give another).
  if (!ownHook) return undefined
  const { threads, aboveBytes } = config.rewriteWorkers
  const readHere = (bodyBytes: number): boolean => threads === 0 || bodyBytes < aboveBytes
  if (!config.rewrite.enabled) return readHere
  return (bodyBytes, incoming) => readHere(bodyBytes) && asksForPassthrough(incoming)
}

/** The request to send before it is read: the client's bytes and headers, as the hook would leave them. */
export function asSent(input: ForwardInput & { readonly body: Buffer }): Extract<PreparedRequest, { kind: 'ready' }> {
  return { kind: 'ready', body: input.body, headers: upstreamRequestHeaders(input.request.headers), noted: {} }
}

/**
 * Reads the request while the upstream works, then takes the answer with what the reading found
 * (the usage reader, the log fields, the accounting): the same as reading it first would have given.
 */
export async function readWhileSending(
  input: ForwardInput,
  sending: Promise<SentRequest>,
): Promise<{ readonly sent: SentRequest; readonly noted: RequestNotes }> {
  const reading = afterTheRequestIsWritten().then(() => prepareRequest(input))
  // Both awaited at once, so a failure of either is never left unobserved while the other runs.
  const [read, sent] = await Promise.all([reading, sending])
  const prepared = read.kind === 'ready' ? read.prepared : undefined
  return { sent: sent.kind === 'replied' ? { ...sent, prepared } : sent, noted: read.noted }
}
