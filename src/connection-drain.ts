import type { Server } from 'node:http'
import type { Socket } from 'node:net'

/**
 * Tracks requests per connection so a shutdown can close every keep-alive connection as soon as it
 * falls idle, while requests and streams still in flight run to their end.
 */
export function trackConnections(server: Server): { drain: () => void } {
  const active = new Map<Socket, number>()
  let draining = false

  server.on('connection', (socket: Socket) => {
    active.set(socket, 0)
    socket.once('close', () => active.delete(socket))
  })
  // An upgraded socket belongs to the WebSocket layer, which closes it itself at shutdown.
  server.on('upgrade', (request: { socket: Socket }) => active.delete(request.socket))
  server.on('request', (request, response) => {
    const socket = request.socket
    active.set(socket, (active.get(socket) ?? 0) + 1)
    if (draining) response.setHeader('connection', 'close')
    response.once('close', () => {
      const left = (active.get(socket) ?? 1) - 1
      active.set(socket, left)
      if (draining && left === 0) socket.destroySoon()
    })
  })

  return {
    drain() {
      draining = true
      for (const [socket, requests] of active) if (requests === 0) socket.destroySoon()
    },
  }
}
