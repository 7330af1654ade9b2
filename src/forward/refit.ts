import type { Prepared } from '../request/prepared.ts'
import type { LengthRefusal, LengthRefusalParser } from '../providers/length-refusal.ts'
import type { WireFormatDefinition } from '../providers/provider-contract.ts'
import { isEventStream } from '../util/headers.ts'
import type { BodyChunks } from '../upstream/exchange.ts'
import { sendWithRetries, type UpstreamCall, type UpstreamReply } from '../upstream/send-with-retries.ts'
import { readPastPreamble } from './hold-preamble.ts'

/** Error bodies are small; more than this is not a length refusal. */
const errorBodyLimit = 256 * 1024

/**
 * On a 400 the format's parser reads as a length refusal, the request was over the upstream's
 * limit: re-plan below it (with the measured size and limit when the refusal names them) and send
 * the smaller request once. Any other 400
 * comes back as it was, body included (and a body cut off mid-way is relayed cut, as passthrough does).
 */
export async function refitIfTooLong(
  reply: UpstreamReply,
  prepared: Prepared,
  call: UpstreamCall,
  readRefusal: LengthRefusalParser | undefined,
): Promise<{ reply: UpstreamReply; prepared: Prepared }> {
  const read = await readBounded(reply, errorBodyLimit)
  const asReply: UpstreamReply = { ...reply, firstChunk: read.body, rest: read.rest }
  if (read.cut || !readRefusal || !prepared.followUp?.replannable) return { reply: asReply, prepared }
  const refusal = readRefusal(read.body)
  if (!refusal) return { reply: asReply, prepared }
  const smaller = await planSmaller(prepared, refusal)
  if (!smaller) return { reply: asReply, prepared }
  return { reply: await sendWithRetries({ ...call, body: smaller.body }), prepared: smaller }
}

interface BoundedRead {
  readonly body: Buffer
  /** What is left to relay: the rest of the body, or the failure that cut it. */
  readonly rest: BodyChunks
  readonly cut: boolean
}

/** Reads up to `limit` bytes; the rest stays in the reply's iterator. A failure mid-body is kept for the relay. */
async function readBounded(reply: UpstreamReply, limit: number): Promise<BoundedRead> {
  const chunks: Buffer[] = reply.firstChunk ? [reply.firstChunk] : []
  let size = reply.firstChunk?.length ?? 0
  try {
    for (let next = await reply.rest.next(); !next.done; next = await reply.rest.next()) {
      chunks.push(next.value)
      size += next.value.length
      if (size > limit) break
    }
  } catch (error) {
    return { body: Buffer.concat(chunks), rest: failingWith(error), cut: true }
  }
  return { body: Buffer.concat(chunks), rest: reply.rest, cut: false }
}

function failingWith(error: unknown): BodyChunks {
  return { next: () => Promise.reject(error as Error), takeQueued: () => [] }
}

/** The formats' readers of a length refusal: in a 400 body, and inside a 200 stream. */
export type RefusalReaders = Pick<WireFormatDefinition, 'lengthRefusal' | 'streamRefusal'>

/**
 * Refits a request the upstream refused for its length, whichever form the refusal took: a 400, or
 * an `error` / `response.failed` event right after a stream's content-free preamble (held back until
 * then, so the client sees either the refit's stream alone or the first stream unchanged).
 */
export async function refitIfRefused(
  reply: UpstreamReply,
  prepared: Prepared,
  call: UpstreamCall,
  readers: RefusalReaders | undefined,
): Promise<{ reply: UpstreamReply; prepared: Prepared }> {
  if (reply.status === 400) return refitIfTooLong(reply, prepared, call, readers?.lengthRefusal)
  const streamRefusal = readers?.streamRefusal
  if (reply.status !== 200 || !streamRefusal || !isEventStream(reply.headers['content-type']))
    return { reply, prepared }
  const verdict = await readPastPreamble(reply, streamRefusal)
  if (verdict.kind === 'relay' || !prepared.followUp?.replannable) return { reply: verdict.reply, prepared }
  const smaller = await planSmaller(prepared, verdict.refusal)
  if (!smaller) return { reply: verdict.reply, prepared }
  abandon(reply.rest)
  return { reply: await sendWithRetries({ ...call, body: smaller.body }), prepared: smaller }
}

/** The refused stream is never read again: its body is drained (bounded) so the connection can be reused. */
function abandon(rest: AsyncIterator<Buffer>): void {
  if ('discard' in rest && typeof rest.discard === 'function') (rest as { discard(): void }).discard()
}

/** The smaller request, or none when re-planning fails: the upstream's own refusal then goes to the client (fail open). */
async function planSmaller(prepared: Prepared, refusal: LengthRefusal): Promise<Prepared | undefined> {
  try {
    return await prepared.followUp?.replan(refusal)
  } catch {
    return undefined
  }
}
