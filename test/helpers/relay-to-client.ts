import { createServer, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { request } from 'undici'
import { afterEach } from 'vitest'
import { relayResponse, type RelayedUsage } from '../../src/stream/relay-response.ts'
import type { UpstreamReply } from '../../src/upstream/send-with-retries.ts'

/**
 * `relayed(reply, usage, settleFirst, upTo?)`: relays an upstream reply to a real client over
 * loopback, and gives what the client received (the whole answer, or its first `upTo` bytes once
 * they are in) and how many writes the relay had made to it. The server is closed after each test,
 * a relay that never ends included.
 */
export function useRelayToClient(): {
  relayed(
    reply: UpstreamReply,
    usage: RelayedUsage,
    settleFirst: boolean,
    upTo?: number,
  ): Promise<{ readonly body: Buffer; readonly writes: number }>
} {
  let server: Server | undefined
  afterEach(() => {
    server?.closeAllConnections()
    server?.close()
    server = undefined
  })
  return {
    async relayed(reply, usage, settleFirst, upTo) {
      let writes = 0
      server = createServer((_request, response: ServerResponse) => {
        const write = response.write.bind(response) as (chunk: Buffer) => boolean
        response.write = ((chunk: Buffer) => {
          writes++
          return write(chunk)
        }) as ServerResponse['write']
        void relayResponse({
          reply,
          response,
          errorShape: { streamEvent: () => '' },
          usage,
          plainUpTo: 1024 * 1024,
          settleFirst,
          abortUpstream: () => undefined,
        })
      })
      await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve))
      const { port } = server.address() as AddressInfo
      const answer = await request(`http://127.0.0.1:${port}/`)
      if (upTo === undefined) return { body: Buffer.from(await answer.body.arrayBuffer()), writes }
      const parts: Buffer[] = []
      let received = 0
      for await (const part of answer.body as AsyncIterable<Buffer>) {
        parts.push(part)
        received += part.length
        if (received >= upTo) break
      }
      return { body: Buffer.concat(parts), writes }
    },
  }
}
