import { describe, expect, it } from 'vitest'
import type { Prepared } from '../../src/request/prepared.ts'
import { createAnthropicUsageReader } from '../../src/providers/anthropic/usage.ts'
import { refitIfTooLong } from '../../src/forward/refit.ts'
import type { BodyChunks } from '../../src/upstream/exchange.ts'
import type { UpstreamCall, UpstreamReply } from '../../src/upstream/send-with-retries.ts'

const refusal = Buffer.from('{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}}')

function reply(): UpstreamReply {
  const done: BodyChunks = { next: async () => ({ done: true, value: undefined }), takeQueued: () => [] }
  return { status: 400, headers: {}, firstChunk: refusal, rest: done, attempts: 1, exhausted: false, firstByteMs: 1 }
}

describe('the refit after a length refusal', () => {
  it('prevents a failing re-plan from becoming a 500: the upstream refusal goes to the client as it was', async () => {
    const prepared: Prepared = {
      body: Buffer.from('{}'),
      followUp: {
        usageReader: () => createAnthropicUsageReader(),
        recordUsage: async () => undefined,
        replannable: true,
        replan: async () => {
          throw new Error('re-plan failed')
        },
      },
    }
    const result = await refitIfTooLong(reply(), prepared, {} as UpstreamCall, () => ({}))
    expect(result.prepared).toBe(prepared)
    expect(result.reply.status).toBe(400)
    expect(result.reply.firstChunk?.toString()).toBe(refusal.toString())
  })
})
