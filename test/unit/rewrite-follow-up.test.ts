import { describe, expect, it } from 'vitest'
import { Calibration } from '../../src/calibration/calibration.ts'
import { RewriteFollowUp } from '../../src/forward/rewrite-hook/follow-up.ts'
import type { ChatSummary, HookRequest } from '../../src/forward/rewrite-hook/hook-request.ts'
import type { PrepareResult } from '../../src/request/prepared.ts'

describe('a rewritten request’s follow-up', () => {
  it('prevents a settled request from holding its bytes: no refit is asked once it is settled, and usage is still read', async () => {
    const asked: HookRequest[] = []
    const usageBodies: unknown[] = []
    const request = {
      deps: { calibration: new Calibration() },
      format: { usage: (answered: { body: unknown }) => (usageBodies.push(answered.body), undefined) },
      original: Buffer.alloc(4096),
      incoming: {},
      isRefit: false,
    } as unknown as HookRequest
    const chat = { json: { model: 'm' }, view: { model: 'm' }, limits: { window: 1000 } } as unknown as ChatSummary
    const sent = { sentEstimate: 10, sized: { key: 'k', unedited: 10 }, planned: 10, state: undefined, bytes: 4096 }
    const again = (next: HookRequest): Promise<PrepareResult> => {
      asked.push(next)
      return Promise.resolve({ kind: 'forward', prepared: { body: Buffer.alloc(1) } })
    }
    const followUp = new RewriteFollowUp(request, chat, 'scope', sent, again)
    expect(followUp.replannable).toBe(true)
    followUp.settle()
    expect(followUp.replannable).toBe(false)
    expect(await followUp.replan({ actualTokens: undefined, limit: 5 })).toBeUndefined()
    expect(asked).toHaveLength(0)
    followUp.usageReader()
    expect(usageBodies).toEqual([{ model: 'm' }])
  })
})
