import type { RawData, WebSocket } from 'ws'

/** Client messages ctxgate holds while an earlier response is in flight before it stops reading the socket. */
const maxQueuedClientMessages = 16

/** What a protocol-aware layer may do with the traffic of one socket pair. */
export interface RelayHooks {
  /** Every client message, in arrival order (the next waits for this one); it decides what goes upstream. */
  readonly clientMessage?: (data: Buffer, isBinary: boolean) => Promise<void>
  /** True when the layer keeps this upstream message back (it relays it itself later, or drops it). */
  readonly holdUpstream?: (data: Buffer, isBinary: boolean) => boolean
  /** Every upstream message, once it is queued for the client. */
  readonly upstreamMessage?: (data: Buffer, isBinary: boolean) => void
  /** The upstream socket ended, before the client is closed (a last word to the client goes here). */
  readonly upstreamClosed?: (code: number) => void
  readonly clientClosed?: (code: number) => void
  /** True while the layer keeps the client's reading stopped itself: backpressure easing must not resume it. */
  readonly clientReadingHeld?: () => boolean
}

export interface FrameRelay {
  toUpstream(data: Buffer | string, isBinary: boolean): void
  toClient(data: Buffer | string, isBinary: boolean): void
  /** Closes both sockets with this code (e.g. 1001 at shutdown). */
  close(code: number, reason: string): void
}

/** A reader stops being read while its peer has this much unsent; it resumes below a quarter of it. */
const highWaterBytes = 1024 * 1024

/**
 * Relays messages, pings, pongs and closes between a client socket and its upstream socket, with
 * backpressure both ways. Messages keep their bytes and their text/binary kind.
 */
export function relayFrames(client: WebSocket, upstream: WebSocket, hooks: RelayHooks = {}): FrameRelay {
  const mayResumeClient = (): boolean => !(hooks.clientReadingHeld?.() ?? false)
  const relay: FrameRelay = {
    toUpstream: (data, isBinary) => sendPaced(client, upstream, data, isBinary, mayResumeClient),
    toClient: (data, isBinary) => sendPaced(upstream, client, data, isBinary, () => true),
    close: (code, reason) => {
      closeWith(client, code, reason)
      closeWith(upstream, code, reason)
    },
  }
  const onClientMessage = hooks.clientMessage ?? ((data, isBinary) => Promise.resolve(relay.toUpstream(data, isBinary)))
  let inOrder = Promise.resolve()
  // Messages wait their turn (one response at a time); past a few, stop reading the client until they are sent.
  let queued = 0
  client.on('message', (data: RawData, isBinary: boolean) => {
    const bytes = asBuffer(data)
    if (++queued >= maxQueuedClientMessages) client.pause()
    inOrder = inOrder
      .then(() => onClientMessage(bytes, isBinary))
      .catch(() => relay.close(1011, 'ctxgate error'))
      .finally(() => {
        if (--queued === maxQueuedClientMessages - 1 && client.readyState === client.OPEN && mayResumeClient())
          client.resume()
      })
  })
  upstream.on('message', (data: RawData, isBinary: boolean) => {
    const bytes = asBuffer(data)
    if (hooks.holdUpstream?.(bytes, isBinary)) return
    relay.toClient(bytes, isBinary)
    hooks.upstreamMessage?.(bytes, isBinary)
  })
  client.on('ping', (data: Buffer) => ifOpen(upstream, () => upstream.ping(data)))
  client.on('pong', (data: Buffer) => ifOpen(upstream, () => upstream.pong(data)))
  upstream.on('ping', (data: Buffer) => ifOpen(client, () => client.ping(data)))
  upstream.on('pong', (data: Buffer) => ifOpen(client, () => client.pong(data)))
  client.on('close', (code: number, reason: Buffer) => {
    hooks.clientClosed?.(code)
    // A client that vanished without a close frame is "going away" to the upstream.
    passClose(upstream, code, reason, 1001)
  })
  upstream.on('close', (code: number, reason: Buffer) => {
    hooks.upstreamClosed?.(code)
    passClose(client, code, reason, 1011)
  })
  // A socket error is followed by its close event, which does the work.
  client.on('error', () => undefined)
  upstream.on('error', () => undefined)
  return relay
}

function sendPaced(
  from: WebSocket,
  to: WebSocket,
  data: Buffer | string,
  isBinary: boolean,
  mayResume: () => boolean,
): void {
  if (to.readyState !== to.OPEN) return
  to.send(data, { binary: isBinary }, () => {
    if (from.isPaused && to.bufferedAmount < highWaterBytes / 4 && mayResume()) from.resume()
  })
  if (to.bufferedAmount > highWaterBytes && !from.isPaused) from.pause()
}

/** Codes 1005, 1006 and 1015 describe a close and may not be sent: they become `fallback`. */
function passClose(peer: WebSocket, code: number, reason: Buffer, fallback: number): void {
  if (peer.readyState === peer.CLOSED || peer.readyState === peer.CLOSING) return
  if (peer.isPaused) peer.resume()
  if (code === 1005) return peer.close()
  if (isSendableCode(code)) return peer.close(code, reason)
  peer.close(fallback, fallback === 1001 ? 'client went away' : 'upstream connection lost')
}

function closeWith(socket: WebSocket, code: number, reason: string): void {
  if (socket.readyState === socket.OPEN || socket.readyState === socket.CONNECTING) socket.close(code, reason)
}

export function isSendableCode(code: number): boolean {
  return (
    (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999)
  )
}

function ifOpen(socket: WebSocket, action: () => void): void {
  if (socket.readyState === socket.OPEN) action()
}

function asBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data
  if (Array.isArray(data)) return Buffer.concat(data)
  return Buffer.from(data)
}
