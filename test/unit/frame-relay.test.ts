import { EventEmitter } from 'node:events'
import { describe, expect, it } from 'vitest'
import type { WebSocket } from 'ws'
import { relayFrames } from '../../src/websocket/frame-relay.ts'

/** Just enough of a ws socket for the relay: events, pause/resume, send. */
class FakeSocket extends EventEmitter {
  readonly OPEN = 1
  readonly CLOSING = 2
  readonly CLOSED = 3
  readonly CONNECTING = 0
  readyState = 1
  bufferedAmount = 0
  isPaused = false
  readonly sent: Buffer[] = []
  pause(): void {
    this.isPaused = true
  }
  resume(): void {
    this.isPaused = false
  }
  send(data: Buffer, _options: unknown, done?: () => void): void {
    this.sent.push(data)
    done?.()
  }
}

describe('the WebSocket frame relay', () => {
  it('prevents a client from queuing without bound behind a response in flight: it stops reading it', async () => {
    const client = new FakeSocket()
    const upstream = new FakeSocket()
    let release: () => void = () => undefined
    const inFlight = new Promise<void>((resolve) => (release = resolve))
    let handled = 0
    relayFrames(client as unknown as WebSocket, upstream as unknown as WebSocket, {
      clientMessage: async () => {
        // The first message is a response that stays in flight; the others wait behind it.
        if (handled++ === 0) await inFlight
      },
    })
    for (let index = 0; index < 15; index++) client.emit('message', Buffer.from(`m${index}`), false)
    expect(client.isPaused).toBe(false)
    client.emit('message', Buffer.from('m15'), false)
    expect(client.isPaused).toBe(true)
    release()
    await new Promise((resolve) => setImmediate(resolve))
    expect(handled).toBe(16)
    expect(client.isPaused).toBe(false)
  })
})
