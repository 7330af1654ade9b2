import { connect } from 'node:net'
import { describe, expect, it } from 'vitest'
import { eventually } from '../helpers/stack.ts'
import { useScriptedStack } from '../helpers/scripted-upstream.ts'

const scripted = useScriptedStack()

describe('flow control', () => {
  it('passes a slow reader’s backpressure to the upstream, and aborts it when the reader leaves', async () => {
    const total = 512 * 1024 * 1024
    const chunk = Buffer.from(`data: ${'x'.repeat(64 * 1024 - 8)}\n\n`)
    let written = 0
    let waitingForDrain = false
    let upstreamClosed = false
    scripted.upstream.handle(async (_request, response) => {
      response.on('close', () => (upstreamClosed = true))
      response.writeHead(200, { 'content-type': 'text/event-stream' })
      while (written < total && !response.destroyed) {
        written += chunk.length
        if (!response.write(chunk)) {
          waitingForDrain = true
          await new Promise((resolve) => response.once('drain', resolve).once('close', resolve))
          waitingForDrain = false
        }
      }
      response.end()
    })

    // A client that sends its request and then never reads.
    const socket = connect(Number(new URL(scripted.stack.proxyUrl).port), '127.0.0.1')
    socket.pause()
    socket.write(
      'POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
    )
    // Settled: the upstream is blocked on a drain and wrote nothing over five polls in a row (the buffers are full).
    let seen = -1
    let stillPolls = 0
    await eventually(() => {
      stillPolls = waitingForDrain && written === seen ? stillPolls + 1 : 0
      seen = written
      expect(stillPolls).toBeGreaterThanOrEqual(5)
    }, 5_000)
    const afterPause = written
    // A stall is nothing happening for a while: only real time can show it (one short window, no fake clock).
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(waitingForDrain).toBe(true)
    // The upstream stalled: a few buffers' worth got out, not the half gigabyte it wanted to send.
    expect(written).toBe(afterPause)
    expect(written).toBeLessThan(64 * 1024 * 1024)

    socket.destroy()
    await eventually(() => expect(upstreamClosed).toBe(true), 2_000)
    expect(written).toBeLessThan(total)
  })
})
