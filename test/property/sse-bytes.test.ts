import fc from 'fast-check'
import { request } from 'undici'
import { describe, expect, it } from 'vitest'
import { useScriptedStack } from '../helpers/scripted-upstream.ts'

const scripted = useScriptedStack()

/** SSE-shaped text with the awkward parts: CRLF and CR endings, comments, unicode, empty data. */
const sseEvent = fc.record({
  event: fc.option(fc.constantFrom('message_start', 'content_block_delta', 'ping', 'error', 'x-unknown'), {
    nil: undefined,
  }),
  data: fc.string({ unit: 'grapheme', maxLength: 40 }).map((text) => text.replace(/[\r\n]/g, ' ')),
  comment: fc.boolean(),
  ending: fc.constantFrom('\n', '\r\n', '\r'),
})
const sseBody = fc
  .array(sseEvent, { minLength: 1, maxLength: 12 })
  .map((events) =>
    Buffer.from(
      events
        .map(
          ({ event, data, comment, ending }) =>
            (comment ? `: keep-alive${ending}` : '') +
            (event ? `event: ${event}${ending}` : '') +
            `data: ${data}${ending}${ending}`,
        )
        .join(''),
    ),
  )

function splitAt(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].toSorted((a, b) => a - b)
  const chunks: Buffer[] = []
  let start = 0
  for (const point of [...points, bytes.length]) {
    if (point > start) chunks.push(bytes.subarray(start, point))
    start = Math.max(start, point)
  }
  return chunks
}

describe('SSE passthrough', () => {
  it('delivers exactly the upstream bytes, each chunk flushed before the next is sent, under any chunking', async () => {
    await fc.assert(
      fc.asyncProperty(sseBody, fc.array(fc.nat(), { maxLength: 20 }), async (body, cuts) => {
        const chunks = splitAt(body, cuts)
        let received = 0
        let notify: () => void = () => undefined
        scripted.upstream.handle(async (_request, response) => {
          response.writeHead(200, { 'content-type': 'text/event-stream' })
          let sent = 0
          for (const chunk of chunks) {
            response.write(chunk)
            sent += chunk.length
            // The next chunk goes only once the client holds this one: a proxy that buffered would stall here.
            while (received < sent) await new Promise<void>((resolve) => (notify = resolve))
          }
          response.end()
        })
        const answer = await request(`${scripted.stack.proxyUrl}/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"stream":true}',
        })
        const parts: Buffer[] = []
        for await (const part of answer.body) {
          parts.push(part as Buffer)
          received += (part as Buffer).length
          notify()
        }
        expect(answer.statusCode).toBe(200)
        expect(Buffer.concat(parts).equals(body)).toBe(true)
      }),
      { numRuns: 40 },
    )
  })

  it('delivers exactly the upstream bytes when chunks arrive in bursts, which the relay joins', async () => {
    await fc.assert(
      fc.asyncProperty(
        sseBody,
        fc.array(fc.nat(), { maxLength: 20 }),
        fc.array(fc.boolean(), { maxLength: 20 }),
        async (body, cuts, pauses) => {
          const chunks = splitAt(body, cuts)
          scripted.upstream.handle(async (_request, response) => {
            response.writeHead(200, { 'content-type': 'text/event-stream' })
            // Bursts: several writes in one turn, so several chunks wait for the relay at once; a pause between some.
            for (const [index, chunk] of chunks.entries()) {
              response.write(chunk)
              if (pauses[index] === true) await new Promise((resolve) => setTimeout(resolve, 1))
            }
            response.end()
          })
          const answer = await request(`${scripted.stack.proxyUrl}/v1/messages`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: '{"stream":true}',
          })
          const received = Buffer.from(await answer.body.arrayBuffer())
          expect(answer.statusCode).toBe(200)
          expect(received.equals(body)).toBe(true)
        },
      ),
      { numRuns: 40 },
    )
  })
})
