import type { Prepared } from '../model-call/prepared.ts'
import type { LengthRefusalParser } from '../providers/length-refusal.ts'
import { sendWithRetries, type UpstreamCall, type UpstreamReply } from '../upstream/send-with-retries.ts'

/** Error bodies are small; more than this is not a length refusal. */
const errorBodyLimit = 256 * 1024

/**
 * On a 400 the format's parser reads as a length refusal with the measured size, the upstream has
 * told ctxgate the real size: re-plan with it and send the smaller request once. Any other 400
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
  if (read.cut || !readRefusal || !prepared.refit) return { reply: asReply, prepared }
  const refusal = readRefusal(read.body)
  // A refusal without numbers (the Responses API's) gives nothing to re-plan with.
  if (refusal?.actualTokens === undefined) return { reply: asReply, prepared }
  const smaller = await prepared.refit(refusal.actualTokens, refusal.limit)
  if (!smaller) return { reply: asReply, prepared }
  return { reply: await sendWithRetries({ ...call, body: smaller.body }), prepared: smaller }
}

interface BoundedRead {
  readonly body: Buffer
  /** What is left to relay: the rest of the body, or the failure that cut it. */
  readonly rest: AsyncIterator<Buffer>
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

function failingWith(error: unknown): AsyncIterator<Buffer> {
  return { next: () => Promise.reject(error as Error) }
}
