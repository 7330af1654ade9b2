import { sendWithRetries, type UpstreamCall, type UpstreamReply } from '../upstream/send-with-retries.ts'
import type { Prepared } from './prepare.ts'

/** Error bodies are small; more than this is not a length refusal. */
const errorBodyLimit = 256 * 1024

/** The upstream's words for "too long", with the measured size and (where it says) the limit (model-apis §5.1, §7.6). */
const tooLongPatterns = [
  /prompt is too long: (\d+) tokens > (\d+) maximum/,
  /exceed context limit: (\d+) \+ \d+ > (\d+)/,
  /maximum context length is (\d+) tokens\. However, your messages resulted in (\d+) tokens/,
]

/**
 * On a 400 that says "prompt is too long", the upstream has told ctxgate the real size: re-plan
 * with it and send the smaller request once. Any other 400 comes back as it was, body included.
 */
export async function refitIfTooLong(
  reply: UpstreamReply,
  prepared: Prepared,
  call: UpstreamCall,
): Promise<{ reply: UpstreamReply; prepared: Prepared }> {
  const body = await readBounded(reply, errorBodyLimit)
  const asReply: UpstreamReply = { ...reply, firstChunk: body }
  const text = body.toString('utf8')
  const index = tooLongPatterns.findIndex((pattern) => pattern.test(text))
  const measured = index === -1 ? null : tooLongPatterns[index]?.exec(text)
  if (!measured || !prepared.refit) return { reply: asReply, prepared }
  // OpenAI names the limit first, Anthropic the size first.
  const [actual, limit] =
    index === 2 ? [Number(measured[2]), Number(measured[1])] : [Number(measured[1]), Number(measured[2])]
  const smaller = await prepared.refit(actual, limit)
  if (!smaller) return { reply: asReply, prepared }
  return { reply: await sendWithRetries({ ...call, body: smaller.body }), prepared: smaller }
}

/** Reads up to `limit` bytes; the rest stays in the reply's iterator. */
async function readBounded(reply: UpstreamReply, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = reply.firstChunk ? [reply.firstChunk] : []
  let size = reply.firstChunk?.length ?? 0
  for (let next = await reply.rest.next(); !next.done; next = await reply.rest.next()) {
    chunks.push(next.value)
    size += next.value.length
    if (size > limit) break
  }
  return Buffer.concat(chunks)
}
