import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** A plain HTTP relay between ctxgate and its upstream that keeps a copy of every answer body, as sent. */
export interface RecordingRelay {
  readonly url: string
  /** Where requests go on to; set once the upstream is up. */
  target: string
  /** Each answer's bytes exactly as the upstream wrote them, in the order they finished. */
  readonly answers: Buffer[]
  close(): Promise<void>
}

export async function startRecordingRelay(): Promise<RecordingRelay> {
  const answers: Buffer[] = []
  const relay = { target: '', answers } as { target: string; answers: Buffer[] }
  const server: Server = createServer((incoming, outgoing) => {
    const onward = httpRequest(
      new URL(incoming.url ?? '/', relay.target),
      { method: incoming.method, headers: incoming.headers },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
        const chunks: Buffer[] = []
        answer.on('data', (chunk: Buffer) => {
          chunks.push(chunk)
          outgoing.write(chunk)
        })
        answer.on('end', () => {
          answers.push(Buffer.concat(chunks))
          outgoing.end()
        })
      },
    )
    onward.on('error', () => outgoing.destroy())
    incoming.pipe(onward)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return Object.assign(relay, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  })
}
