import { Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { createProxyMetrics } from '../../src/metrics/proxy-metrics.ts'
import { ModelLabels } from '../../src/metrics/model-labels.ts'
import type { Prepared } from '../../src/request/prepared.ts'
import { SessionAccounting } from '../../src/session/accounting.ts'
import { SocketTurn, type TurnDeps } from '../../src/websocket/turn.ts'

const event = (value: object): Buffer => Buffer.from(JSON.stringify(value))
const created = event({ type: 'response.created', response: { id: 'r1' } })
const inProgress = event({ type: 'response.in_progress', response: { id: 'r1' } })
const delta = event({ type: 'response.output_text.delta', delta: 'hi' })
const refusal = event({ type: 'error', status: 400, error: { code: 'context_length_exceeded', message: 'too long' } })

/** A prepared request whose length refusal ctxgate may answer with a smaller one. */
function replannable(log: Record<string, unknown>): Prepared {
  return {
    body: Buffer.from('{}'),
    log,
    followUp: {
      usageReader: () => ({
        fromJson: () => undefined,
        onEvent: () => undefined,
        result: () => undefined,
        complete: () => false,
      }),
      recordUsage: async () => undefined,
      replannable: true,
      replan: async () => undefined,
    },
  }
}

/** A replannable request that counts how often it was told no refit will come. */
function settling(): { prepared: Prepared; settled: () => number } {
  let settled = 0
  const base = replannable({})
  const followUp = { ...(base.followUp as NonNullable<Prepared['followUp']>), settle: () => void settled++ }
  return { prepared: { ...base, body: Buffer.alloc(1024), followUp }, settled: () => settled }
}

describe('a socket turn opening', () => {
  it('prevents holding a large conversation for as long as its response streams: the bytes sent are let go at once, the request a refit would re-plan once the opening shows no refusal', () => {
    const turn = new SocketTurn(1, 10)
    const { prepared, settled } = settling()
    turn.adopt(prepared, true)
    turn.send()
    expect(turn.prepared?.body.length).toBe(0)
    expect(settled()).toBe(0)
    expect(turn.openingStep(created)).toEqual({ kind: 'swallow' })
    expect(settled()).toBe(0)
    expect(turn.openingStep(delta).kind).toBe('release')
    expect(settled()).toBe(1)
  })

  it('prevents holding a large conversation a refit can never use: a request that cannot be made smaller lets go of it when sent, and so does a refused one once its refit is prepared', () => {
    const plain = settling()
    const notReplannable = new SocketTurn(1, 10)
    notReplannable.adopt({ ...plain.prepared, followUp: { ...plain.prepared.followUp!, replannable: false } }, true)
    notReplannable.send()
    expect(plain.settled()).toBe(1)

    const refused = settling()
    const smaller = settling()
    const turn = new SocketTurn(2, 10)
    turn.adopt(refused.prepared, true)
    turn.send()
    expect(turn.openingStep(refusal).kind).toBe('refit')
    turn.refitEnded()
    expect(refused.settled()).toBe(1)
    turn.refitted(smaller.prepared)
    expect(smaller.settled()).toBe(1)
    expect(turn.prepared?.body.length).toBe(0)
  })

  it('relays everything when its request cannot be made smaller', () => {
    const turn = new SocketTurn(1, 10)
    turn.send()
    expect(turn.sent).toBe(true)
    expect(turn.openingStep(created)).toEqual({ kind: 'relay' })
  })

  it('holds the preamble, then releases it in order on the first message that is not a refusal', () => {
    const turn = new SocketTurn(1, 10)
    turn.adopt(replannable({}), true)
    turn.send()
    expect(turn.openingStep(created)).toEqual({ kind: 'swallow' })
    expect(turn.openingStep(inProgress)).toEqual({ kind: 'swallow' })
    expect(turn.openingStep(delta)).toEqual({ kind: 'release', held: [created, inProgress] })
    expect(turn.openingStep(delta)).toEqual({ kind: 'relay' })
  })

  it('keeps what the refused response sends while the smaller one is prepared, and gives it back if none is made', () => {
    const turn = new SocketTurn(1, 10)
    turn.adopt(replannable({}), true)
    turn.send()
    turn.openingStep(created)
    expect(turn.openingStep(refusal)).toEqual({ kind: 'refit', refusal: {} })
    expect(turn.openingStep(delta)).toEqual({ kind: 'swallow' })
    expect(turn.refitEnded()).toEqual([created, refusal, delta])
    expect(turn.openingStep(delta)).toEqual({ kind: 'relay' })
  })

  it("drops the refused response's leftovers until the smaller one's response.created", () => {
    const turn = new SocketTurn(1, 10)
    turn.adopt(replannable({ first: true }), true)
    turn.send()
    turn.openingStep(refusal)
    turn.refitEnded()
    turn.refitted(replannable({ smaller: true }))
    expect(turn.prepared?.log).toEqual({ smaller: true })
    expect(turn.openingStep(delta)).toEqual({ kind: 'swallow' })
    expect(turn.openingStep(created)).toEqual({ kind: 'relay' })
    expect(turn.openingStep(delta)).toEqual({ kind: 'relay' })
  })

  it('gives back nothing once the turn ended during the refit, and its one log line says how it ended', () => {
    const lines: Record<string, unknown>[] = []
    const deps = {
      socketId: 's',
      path: '/v1/responses',
      metrics: createProxyMetrics(new Registry()),
      models: new ModelLabels(8),
      sessions: new SessionAccounting(8),
      logger: { isLevelEnabled: () => true, info: (line: Record<string, unknown>) => lines.push(line), warn: () => 0 },
    } as unknown as TurnDeps
    const turn = new SocketTurn(3, 10)
    turn.adopt(replannable({ rewrite: 'x' }), true)
    turn.send()
    turn.openingStep(refusal)
    turn.end(deps, { status: 0, outcome: 'client_closed' })
    turn.end(deps, { status: 200, outcome: 'complete' })
    expect(turn.done).toBe(true)
    expect(turn.refitEnded()).toEqual([])
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({
      reqId: 's:3',
      method: 'WS',
      status: 0,
      outcome: 'client_closed',
      attempts: 1,
      sentAs: 'full-input',
      bytesIn: 10,
      rewrite: 'x',
    })
  })
})
