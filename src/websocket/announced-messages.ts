/**
 * A Responses socket's large messages take their place in the preparation allowance when their
 * first frame header arrives, not once ws has received them whole. ws keeps every chunk of a
 * message until its last one, so with sixteen clients each sending 10 MB at once, all sixteen were
 * mostly received (about 150 MB) before the first could be counted. Now the socket stops reading
 * until its message has a place, so what is received and not yet prepared stays within the
 * allowance (plus under 256 KiB and a chunk per socket). A place held longer than `graceMs` while
 * the message is still arriving is given back, so a client that sends slowly cannot hold the others
 * up; its message then asks again once whole, as before. While a socket's earlier message is still
 * handled, its next large one waits unread (in order: it must not hold a place the earlier one needs).
 */
import { FrameHeaders } from './frame-headers.ts'
import { gatedBytes, type HeldPlace, type PreparationGate } from './preparation-gate.ts'

/** The client socket's reading (ws's pause and resume). */
export interface Reading {
  pause(): void
  resume(): void
}

interface Announced {
  bytes: number
  /** Its place once given; undefined when it took none. */
  place?: Promise<HeldPlace>
  /** Given back (lapsed, or the socket closed): its turn asks anew. */
  given: boolean
  /** Waits unread for the socket's earlier message to be handled. */
  deferred: boolean
  lapse?: NodeJS.Timeout
}

export class AnnouncedMessages {
  readonly #gate: PreparationGate
  readonly #reading: Reading
  readonly #graceMs: number
  readonly #headers = new FrameHeaders()
  #current: Announced | undefined
  /** Received whole, in order, their turns not yet started. */
  readonly #arrived: Announced[] = []
  #inHand = false
  #paused = false
  #closed = false

  constructor(gate: PreparationGate, reading: Reading, graceMs: number) {
    this.#gate = gate
    this.#reading = reading
    this.#graceMs = graceMs
  }

  /** Bytes from the client's socket, before ws reads them. */
  read(chunk: Buffer): void {
    for (const header of this.#headers.read(chunk)) {
      if (header.opcode >= 8) continue
      if (header.opcode !== 0) {
        if (this.#current) this.#giveBack(this.#current)
        this.#current = { bytes: 0, given: false, deferred: false }
      }
      const current = this.#current
      if (!current) continue
      current.bytes += header.length
      if (current.bytes >= gatedBytes && !current.place && !current.deferred) this.#claim(current)
    }
  }

  /** ws received a whole message (before the relay queues it for its turn). */
  arrived(): void {
    const message = this.#current ?? { bytes: 0, given: false, deferred: false }
    this.#current = undefined
    clearTimeout(message.lapse)
    if (message.deferred) {
      message.deferred = false
      this.#resume()
    }
    this.#arrived.push(message)
  }

  /** The oldest arrived message's turn starts: its place, once given (undefined when it has none). */
  async next(): Promise<HeldPlace | undefined> {
    this.#inHand = true
    const message = this.#arrived.shift()
    const place = await message?.place
    return message?.given ? undefined : place
  }

  /** That message has been handled: the next one may take its place. */
  done(): void {
    this.#inHand = false
    const current = this.#current
    if (this.#arrived.length > 0 || !current?.deferred) return
    current.deferred = false
    this.#claim(current)
  }

  /** The socket closed: every place it holds for messages not in their turn goes back. */
  close(): void {
    this.#closed = true
    for (const message of [...this.#arrived.splice(0), ...(this.#current ? [this.#current] : [])])
      this.#giveBack(message)
    this.#current = undefined
  }

  #claim(message: Announced): void {
    if (this.#closed) return
    if (this.#inHand || this.#arrived.length > 0) {
      message.deferred = true
      return this.#pause()
    }
    const waits = this.#gate.waits(message.bytes)
    if (waits) {
      this.#gate.readingPaused()
      this.#pause()
    } else this.#resume()
    message.place = this.#gate.enter(message.bytes).then((place) => {
      if (message.given || this.#closed) place.leave()
      else if (this.#current === message) {
        this.#resume()
        message.lapse = setTimeout(() => this.#giveBack(message), this.#graceMs)
        message.lapse.unref()
      }
      return place
    })
  }

  #giveBack(message: Announced): void {
    clearTimeout(message.lapse)
    message.given = true
    if (message.deferred && message === this.#current) this.#resume()
    message.deferred = false
    void message.place?.then((place) => place.leave())
  }

  #pause(): void {
    if (this.#paused) return
    this.#paused = true
    this.#reading.pause()
  }

  #resume(): void {
    if (!this.#paused) return
    this.#paused = false
    this.#reading.resume()
  }

  /** Reading is stopped here (frame-relay's backpressure must not resume it). */
  get holding(): boolean {
    return this.#paused
  }
}
