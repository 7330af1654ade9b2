import { describe, expect, it } from 'vitest'
import { GatePlace, PreparationGate, preparationCopies } from '../../src/websocket/preparation-gate.ts'

describe('the WebSocket preparation allowance', () => {
  it('prevents unbounded preparation: a place that does not fit beside those held waits, in order, until they go', async () => {
    const gate = new PreparationGate(100)
    const first = await gate.enter(60)
    expect(gate.waits(60)).toBe(true)
    expect(gate.waits(40)).toBe(false)
    let secondStarted = false
    const second = gate.enter(60).then((place) => ((secondStarted = true), place))
    // Once one waits, a smaller one that would fit waits behind it (arrival order).
    expect(gate.waits(10)).toBe(true)
    await Promise.resolve()
    expect(secondStarted).toBe(false)
    expect(gate.pending).toBe(120)
    first.leave()
    const held = await second
    expect(gate.pending).toBe(60)
    held.leave()
    held.leave()
    expect(gate.pending).toBe(0)
  })

  it('prevents counting a large message at its bytes alone: its place is charged its working set, so fewer run at once', async () => {
    const gate = new PreparationGate(100, preparationCopies)
    const place = await gate.enter(10)
    expect(gate.pending).toBe(10 * preparationCopies)
    expect(place.bytes).toBe(10)
    // At its bytes, a second message of 10 would fit beside the first; at its working set it waits.
    expect(gate.waits(10)).toBe(true)
    expect(gate.waits(Math.floor((100 - 10 * preparationCopies) / preparationCopies))).toBe(false)
    expect(place.grow(12)).toBe(true)
    expect(gate.pending).toBe(12 * preparationCopies)
    place.leave()
    expect(gate.pending).toBe(0)
  })

  it('prevents a stall: a place larger than the whole allowance still runs, alone', async () => {
    const gate = new PreparationGate(100)
    const place = await gate.enter(500)
    expect(gate.waits(1)).toBe(true)
    place.leave()
    expect(gate.waits(1)).toBe(false)
  })

  it('grows a held place only within the allowance beside others, and never once it was left', async () => {
    const gate = new PreparationGate(100)
    const other = await gate.enter(10)
    const place = await gate.enter(60)
    expect(place.grow(50)).toBe(true)
    expect(place.grow(90)).toBe(true)
    expect(gate.pending).toBe(100)
    expect(place.grow(91)).toBe(false)
    expect(place.bytes).toBe(90)
    other.leave()
    place.leave()
    expect(place.grow(70)).toBe(false)
    expect(gate.pending).toBe(0)
  })

  it('prevents a message already read from queueing again behind unread ones: a place held alone grows past the allowance', async () => {
    const gate = new PreparationGate(100, preparationCopies)
    const place = await gate.enter(20)
    let waiterStarted = false
    const waiter = gate.enter(5).then((held) => ((waiterStarted = true), held))
    expect(place.grow(21)).toBe(true)
    expect(gate.held).toBe(21 * preparationCopies)
    await Promise.resolve()
    expect(waiterStarted).toBe(false)
    place.leave()
    ;(await waiter).leave()
    expect(gate.pending).toBe(0)
  })

  it('prevents a second wait: a message whose place was taken at its header keeps it when its conversation is a little larger', async () => {
    const gate = new PreparationGate(1_000_000)
    const place = new GatePlace(gate, await gate.enter(600_000))
    await place.take(600_000)
    await place.take(610_000)
    expect(gate.pending).toBe(610_000)
    // Past the allowance beside nothing else: given up and asked for anew, alone.
    await place.take(1_500_000)
    expect(gate.pending).toBe(1_500_000)
    place.give()
    expect(gate.pending).toBe(0)
  })
})
