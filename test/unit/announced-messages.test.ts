import { describe, expect, it } from 'vitest'
import { AnnouncedMessages } from '../../src/websocket/announced-messages.ts'
import { PreparationGate } from '../../src/websocket/preparation-gate.ts'

/** The first bytes of a masked text frame announcing `length` payload bytes. */
function header(length: number, opcode = 1, fin = true): Buffer {
  const head = Buffer.alloc(14)
  head[0] = (fin ? 0x80 : 0) | opcode
  head[1] = 0x80 | 127
  head.writeBigUInt64BE(BigInt(length), 2)
  return head
}

/** A whole frame: its header and `length` payload bytes. */
function frame(length: number, opcode = 1, fin = true): Buffer {
  return Buffer.concat([header(length, opcode, fin), Buffer.alloc(length)])
}

function socket(gate: PreparationGate, graceMs = 60_000) {
  const reading = {
    paused: false,
    pause: () => void (reading.paused = true),
    resume: () => void (reading.paused = false),
  }
  return { reading, messages: new AnnouncedMessages(gate, reading, graceMs) }
}

const tick = (ms = 0): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

describe('large socket messages placed at their first frame header', () => {
  it('prevents receiving many large messages at once: the second socket stops reading until the first message is prepared', async () => {
    const gate = new PreparationGate(1_000_000)
    const first = socket(gate)
    const second = socket(gate)
    first.messages.read(header(700_000))
    second.messages.read(header(700_000))
    expect(first.reading.paused).toBe(false)
    expect(second.reading.paused).toBe(true)
    expect(gate.pauses).toBe(1)
    expect(gate.pending).toBe(1_400_000)
    first.messages.arrived()
    const place = await first.messages.next()
    expect(place?.bytes).toBe(700_000)
    place?.leave()
    first.messages.done()
    await tick()
    expect(second.reading.paused).toBe(false)
    expect(gate.pending).toBe(700_000)
  })

  it('leaves small messages and control frames out of the allowance', async () => {
    const gate = new PreparationGate(1_000_000)
    const { messages } = socket(gate)
    messages.read(frame(200, 9))
    messages.read(frame(200_000))
    expect(gate.pending).toBe(0)
    messages.arrived()
    expect(await messages.next()).toBeUndefined()
    messages.done()
    messages.read(header(300_000))
    expect(gate.pending).toBe(300_000)
  })

  it('places a fragmented message once its fragments pass 256 KiB', async () => {
    const gate = new PreparationGate(10_000_000)
    const { messages } = socket(gate)
    messages.read(frame(200_000, 1, false))
    expect(gate.pending).toBe(0)
    messages.read(header(200_000, 0, true))
    expect(gate.pending).toBe(400_000)
    messages.arrived()
    expect((await messages.next())?.bytes).toBe(400_000)
  })

  it('prevents a slow sender from holding the others up: its place goes back after the grace, and its turn asks anew', async () => {
    const gate = new PreparationGate(1_000_000)
    const slow = socket(gate, 20)
    const other = socket(gate)
    slow.messages.read(header(700_000))
    other.messages.read(header(700_000))
    expect(other.reading.paused).toBe(true)
    await tick(60)
    expect(other.reading.paused).toBe(false)
    slow.messages.arrived()
    expect(await slow.messages.next()).toBeUndefined()
  })

  it('prevents a deadlock: while a socket handles a message, its next large one waits unread and takes no place', async () => {
    const gate = new PreparationGate(1_000_000)
    const { reading, messages } = socket(gate)
    messages.read(frame(700_000))
    messages.arrived()
    const place = await messages.next()
    messages.read(header(700_000))
    expect(reading.paused).toBe(true)
    expect(gate.pending).toBe(700_000)
    place?.leave()
    messages.done()
    expect(reading.paused).toBe(false)
    expect(gate.pending).toBe(700_000)
  })

  it('gives every place back when the socket closes', async () => {
    const gate = new PreparationGate(1_000_000)
    const { messages } = socket(gate)
    messages.read(frame(300_000))
    messages.arrived()
    // Behind one not yet in its turn: it waits unread, without a place.
    messages.read(header(300_000))
    expect(gate.pending).toBe(300_000)
    messages.close()
    await tick()
    expect(gate.pending).toBe(0)
  })
})
