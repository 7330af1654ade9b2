import type { EventSourceMessage } from 'eventsource-parser'
import type { AnswerFollowUp } from '../request/prepared.ts'
import type { ResponseFacts, Usage, UsageReader } from '../model-call/usage.ts'
import type { RelayedUsage } from '../stream/relay-response.ts'

/**
 * The usage one answer reported, read on the way and recorded (calibration) at most once (with a
 * shared store before the client has the whole answer). Nothing in it may break the answer: errors are contained here.
 */
export class AnswerUsage implements RelayedUsage {
  readonly #reader: UsageReader
  readonly #status: number
  readonly #followUp: AnswerFollowUp
  #settled = false
  #usage: Usage | undefined

  constructor(followUp: AnswerFollowUp, status: number) {
    this.#followUp = followUp
    this.#reader = followUp.usageReader()
    this.#status = status
  }

  onEvent(event: EventSourceMessage): void {
    try {
      this.#reader.onEvent(event)
    } catch {
      // Observing a stream must never break it.
    }
  }

  complete(): boolean {
    return this.#reader.complete()
  }

  get settled(): boolean {
    return this.#settled
  }

  async settle(plainBody?: Buffer): Promise<void> {
    if (this.#settled) return
    this.#settled = true
    try {
      if (this.#status !== 200) return
      const usage = plainBody ? this.#fromJson(plainBody) : this.#reader.result()
      if (!usage) return
      this.#usage = usage
      await this.#followUp.recordUsage(usage)
    } catch {
      // Accounting must never break the answer.
    }
  }

  /** What the answer reported, once settled. */
  get usage(): Usage | undefined {
    return this.#usage
  }

  /** The answer's id, model and finish reasons, when the reader saw them. */
  response(): ResponseFacts | undefined {
    return this.#reader.response?.()
  }

  #fromJson(copy: Buffer): Usage | undefined {
    try {
      return this.#reader.fromJson(JSON.parse(copy.toString('utf8')))
    } catch {
      return undefined
    }
  }
}
