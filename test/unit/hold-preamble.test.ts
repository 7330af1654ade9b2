import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { readResponsesEventRefusal, responsesPreamble } from '../../src/providers/openai/length-refusal.ts'
import { readPastPreamble } from '../../src/forward/hold-preamble.ts'
import { ResponseBody } from '../../src/upstream/exchange.ts'
import type { UpstreamReply } from '../../src/upstream/send-with-retries.ts'

const reader = { preamble: responsesPreamble, read: readResponsesEventRefusal }
const frame = (event: Record<string, unknown>) => `event: ${String(event['type'])}\ndata: ${JSON.stringify(event)}\n\n`
const preamble = frame({ type: 'response.created', response: { id: 'r' } }) + frame({ type: 'response.in_progress' })
const refusal = frame({ type: 'error', error: { code: 'context_length_exceeded', message: 'Your input exceeds…' } })
const content = frame({ type: 'response.output_text.delta', delta: 'x' }) + frame({ type: 'response.completed' })

function replyOf(chunks: readonly Buffer[]): UpstreamReply {
  const [first, ...rest] = chunks
  let index = 0
  return {
    status: 200,
    headers: { 'content-type': 'text/event-stream' },
    firstChunk: first ?? null,
    rest: {
      next: () =>
        Promise.resolve(
          index < rest.length ? { value: rest[index++] as Buffer, done: false } : { value: undefined, done: true },
        ),
      takeQueued: () => [],
    },
    attempts: 1,
    exhausted: false,
    firstByteMs: 0,
  }
}

async function drain(reply: UpstreamReply): Promise<Buffer[]> {
  const chunks = reply.firstChunk ? [reply.firstChunk] : []
  for (let next = await reply.rest.next(); !next.done; next = await reply.rest.next()) chunks.push(next.value)
  return chunks
}

/** Cuts `text` at the given offsets, into chunks as a socket might deliver them. */
function cut(text: string, offsets: readonly number[]): Buffer[] {
  const bytes = Buffer.from(text)
  const points = [...new Set(offsets.map((offset) => offset % bytes.length))].toSorted((a, b) => a - b)
  return [0, ...points, bytes.length]
    .slice(0, -1)
    .map((start, index, all) => bytes.subarray(start, all[index + 1] ?? bytes.length))
    .filter((chunk) => chunk.length > 0)
}

describe('readPastPreamble', () => {
  it('gives back a stream that is not refused chunk for chunk, however it was cut', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(), { maxLength: 12 }), async (offsets) => {
        const chunks = cut(preamble + content, offsets)
        const verdict = await readPastPreamble(replyOf(chunks), reader)
        expect(verdict.kind).toBe('relay')
        expect(await drain(verdict.reply)).toEqual(chunks)
      }),
    )
  })

  it('finds the refusal right after the preamble, however the stream was cut', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(), { maxLength: 12 }), async (offsets) => {
        const chunks = cut(preamble + refusal, offsets)
        const verdict = await readPastPreamble(replyOf(chunks), reader)
        expect(verdict.kind).toBe('refused')
        // Kept whole, for when no smaller request can be made.
        expect(Buffer.concat(await drain(verdict.reply)).toString()).toBe(preamble + refusal)
      }),
    )
  })

  it('does not take a refusal after content for one: only the first event past the preamble decides', async () => {
    const verdict = await readPastPreamble(replyOf([Buffer.from(preamble + content + refusal)]), reader)
    expect(verdict.kind).toBe('relay')
  })
})

describe('a stream given back after its preamble', () => {
  it('hands over its held and queued chunks at once, in order, within the limits, the same bytes however it was cut', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.array(fc.nat({ max: 600 }), { minLength: 1, maxLength: 12 }),
        async (offsets, totals) => {
          const chunks = cut(preamble + content, offsets)
          // Everything arrived before the preamble was judged: the rest waits in the answer's body.
          const body = new ResponseBody()
          for (const chunk of chunks.slice(1)) body.push(chunk)
          body.end()
          const verdict = await readPastPreamble({ ...replyOf(chunks), rest: body }, reader)
          const { rest, firstChunk } = verdict.reply
          const read: Buffer[] = firstChunk ? [firstChunk] : []
          let round = 0
          for (;;) {
            const limits = { totalBytes: totals[round++ % totals.length] ?? 0, chunkBytes: 200 }
            const taken = rest.takeQueued(limits)
            expect(taken.reduce((sum, chunk) => sum + chunk.length, 0)).toBeLessThanOrEqual(limits.totalBytes)
            for (const chunk of taken) expect(chunk.length).toBeLessThan(limits.chunkBytes)
            read.push(...taken)
            const next = await rest.next()
            if (next.done) break
            read.push(next.value)
          }
          expect(Buffer.concat(read).toString()).toBe(preamble + content)
        },
      ),
    )
  })
})

describe('readResponsesEventRefusal', () => {
  it('reads the code on the event, in its error, or in the failed response', () => {
    expect(readResponsesEventRefusal('{"type":"error","code":"context_length_exceeded","message":"m"}')).toEqual({})
    expect(readResponsesEventRefusal('{"type":"error","error":{"code":"context_length_exceeded"}}')).toEqual({})
    expect(
      readResponsesEventRefusal('{"type":"response.failed","response":{"error":{"code":"context_length_exceeded"}}}'),
    ).toEqual({})
  })
  it('ignores the code in any other event or field (client text echoed in a delta)', () => {
    expect(
      readResponsesEventRefusal('{"type":"response.output_text.delta","delta":"context_length_exceeded"}'),
    ).toBeUndefined()
    expect(
      readResponsesEventRefusal('{"type":"error","error":{"code":"server_error","message":"context_length_exceeded"}}'),
    ).toBeUndefined()
    expect(readResponsesEventRefusal('not json context_length_exceeded')).toBeUndefined()
  })
})
