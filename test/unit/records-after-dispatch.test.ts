import { describe, expect, it } from 'vitest'
import type { PreparedRequest } from '../../src/forward/prepare-request.ts'
import { recordsAfterDispatch } from '../../src/forward/records-after-dispatch.ts'
import type { SentRequest } from '../../src/forward/send-upstream.ts'
import type { Prepared } from '../../src/request/prepared.ts'
import type { UpstreamReply } from '../../src/upstream/send-with-retries.ts'

const reply = {
  status: 200,
  headers: {},
  firstChunk: null,
  attempts: 1,
  exhausted: false,
  firstByteMs: 1,
} as unknown as UpstreamReply

function readyWith(prepared: Prepared): Extract<PreparedRequest, { kind: 'ready' }> {
  return { kind: 'ready', body: prepared.body, headers: {}, prepared, noted: {} }
}

function repliedWith(prepared: Prepared | undefined): SentRequest {
  return { kind: 'replied', reply, prepared, refitted: false, earlierAttempts: 0 }
}

describe('records after dispatch', () => {
  it('replace the early request with the recorded one, and note its log and accounting', async () => {
    const whole: Prepared = {
      body: Buffer.from('{}'),
      log: { turn: 1 },
      accounting: { model: 'm', refusalAvoided: false },
    }
    const early: Prepared = { body: whole.body, afterDispatch: () => Promise.resolve(whole) }
    const { noted, sent } = await recordsAfterDispatch(readyWith(early), Promise.resolve(repliedWith(early)))
    expect(noted).toEqual({ log: { turn: 1 }, accounting: { model: 'm', refusalAvoided: false } })
    expect(sent).toMatchObject({ kind: 'replied', prepared: whole })
  })

  it('that throw leave the request as a failed preparation: failOpen, no records, nothing to read usage with', async () => {
    const early: Prepared = {
      body: Buffer.from('{}'),
      followUp: {
        usageReader: () => ({}) as never,
        recordUsage: () => Promise.resolve(),
        replannable: false,
        replan: () => Promise.resolve(undefined),
      },
      afterDispatch: () => Promise.reject(new Error('records bug')),
    }
    const { noted, sent } = await recordsAfterDispatch(readyWith(early), Promise.resolve(repliedWith(early)))
    expect(noted).toEqual({ failOpen: 'prepare', error: 'records bug' })
    expect(sent).toMatchObject({ kind: 'replied', prepared: undefined })
  })

  it('keep a refit’s own request, and wait for the upstream call however it ends', async () => {
    const refit: Prepared = { body: Buffer.from('{"refit":true}'), log: { refit: true } }
    const whole: Prepared = { body: Buffer.from('{}'), log: { turn: 2 } }
    const early: Prepared = { body: whole.body, afterDispatch: () => Promise.resolve(whole) }
    const refitted = await recordsAfterDispatch(readyWith(early), Promise.resolve(repliedWith(refit)))
    expect(refitted.sent).toMatchObject({ prepared: refit })
    expect(refitted.noted).toEqual({ log: { turn: 2 } })
    const cancelled = await recordsAfterDispatch(readyWith(early), Promise.resolve({ kind: 'cancelled' }))
    expect(cancelled).toEqual({ noted: { log: { turn: 2 } }, sent: { kind: 'cancelled' } })
  })
})
