import type { IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { WebSocket, WebSocketServer, type RawData } from 'ws'

export interface Received {
  readonly text: string
  readonly binary: boolean
}

/** Opens a client socket and resolves once it is open (rejects with the refusal's status). */
export function openSocket(url: string, headers: Record<string, string> = {}): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers })
    socket.once('open', () => resolve(socket))
    socket.once('unexpected-response', (_request, response) => {
      reject(new Error(`refused with ${response.statusCode}`))
      socket.terminate()
    })
    socket.once('error', reject)
  })
}

/** Every message a socket receives, in order. */
export function collect(socket: WebSocket): Received[] {
  const received: Received[] = []
  socket.on('message', (data: RawData, binary: boolean) => received.push({ text: String(data), binary }))
  return received
}

const terminalTypes = new Set(['response.completed', 'response.incomplete', 'response.failed', 'error'])

/** Sends one message and resolves with the events of the response it starts, up to the terminal one. */
export function turn(socket: WebSocket, message: unknown): Promise<Record<string, unknown>[]> {
  return new Promise((resolve, reject) => {
    const events: Record<string, unknown>[] = []
    const onMessage = (data: RawData): void => {
      const event = JSON.parse(String(data)) as Record<string, unknown>
      events.push(event)
      if (!terminalTypes.has(String(event['type']))) return
      socket.off('message', onMessage)
      resolve(events)
    }
    socket.on('message', onMessage)
    socket.once('close', (code) => reject(new Error(`closed with ${code} after ${events.length} events`)))
    socket.send(typeof message === 'string' ? message : JSON.stringify(message))
  })
}

export function closed(socket: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) =>
    socket.once('close', (code: number, reason: Buffer) => resolve({ code, reason: reason.toString() })),
  )
}

export interface ScriptedUpstream {
  readonly url: string
  /** Upstream ends of the sockets ctxgate opened, in order, with their handshakes. */
  readonly sockets: { socket: WebSocket; handshake: IncomingMessage }[]
  next(): Promise<{ socket: WebSocket; handshake: IncomingMessage }>
  close(): Promise<void>
}

/** A WebSocket server a test drives by hand, standing in for the upstream. */
export async function startScriptedUpstream(): Promise<ScriptedUpstream> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0, autoPong: true })
  await new Promise<void>((resolve) => server.once('listening', () => resolve()))
  const sockets: { socket: WebSocket; handshake: IncomingMessage }[] = []
  const waiting: ((entry: { socket: WebSocket; handshake: IncomingMessage }) => void)[] = []
  let handedOut = 0
  server.on('connection', (socket, handshake) => {
    sockets.push({ socket, handshake })
    const resolve = waiting.shift()
    if (resolve) resolve(sockets[handedOut++] as { socket: WebSocket; handshake: IncomingMessage })
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    sockets,
    /** The next socket ctxgate opens (or the oldest one not handed out yet). */
    next: () =>
      new Promise((resolve) => {
        const ready = sockets[handedOut]
        if (ready) {
          handedOut++
          resolve(ready)
        } else waiting.push(resolve)
      }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of server.clients) client.terminate()
        server.close(() => resolve())
      }),
  }
}
