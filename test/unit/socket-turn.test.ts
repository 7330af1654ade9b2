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

describe('a socket turn opening', () => {
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
