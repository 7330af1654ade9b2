import { describe, expect, it } from 'vitest'
import { PreparationGate } from '../../src/websocket/preparation-gate.ts'

describe('the WebSocket preparation allowance', () => {
  it('prevents unbounded queues: reading pauses when the held messages reach the allowance, and resumes when they go', async () => {
    const signals: boolean[] = []
    const gate = new PreparationGate(100, (paused) => signals.push(paused))
    const first = await gate.enter(60)
    // The second does not fit beside the first: it waits, and together they fill the allowance.
    let secondStarted = false
    const second = gate.enter(60).then((leave) => {
      secondStarted = true
      return leave
    })
    await Promise.resolve()
    expect(secondStarted).toBe(false)
    expect(gate.pending).toBe(120)
    expect(signals).toEqual([true])
    first()
    const leaveSecond = await second
    expect(secondStarted).toBe(true)
    expect(gate.pending).toBe(60)
    expect(signals).toEqual([true, false])
    leaveSecond()
    leaveSecond()
    expect(gate.pending).toBe(0)
    expect(gate.pauses).toBe(1)
  })

  it('prevents a stall: a message larger than the whole allowance still runs, alone', async () => {
    const gate = new PreparationGate(100)
    const leave = await gate.enter(500)
    expect(gate.paused).toBe(true)
    leave()
    expect(gate.paused).toBe(false)
  })
})
