import { z } from 'zod'

/** Failures the fake upstream can act out, one per request, to test what ctxgate does with them. */
export const faultSchema = z.discriminatedUnion('kind', [
  /** Close the connection before any response bytes. */
  z.object({ kind: z.literal('reset') }),
  /** Send status and headers, then close before the body. */
  z.object({ kind: z.literal('reset-after-headers') }),
  /** An error status in the provider's shape, with optional retry hints. */
  z.object({
    kind: z.literal('status'),
    status: z.number().int().min(400).max(599),
    retryAfter: z.string().optional(),
    retryAfterMs: z.number().int().min(0).optional(),
    shouldRetry: z.boolean().optional(),
  }),
  /** Accept the request and never answer. */
  z.object({ kind: z.literal('hang') }),
  /** Stream `afterFrames` frames, then close the connection. */
  z.object({ kind: z.literal('reset-mid-stream'), afterFrames: z.number().int().min(0).default(2) }),
  /** Stream `afterFrames` frames, then an overloaded error event, then end. */
  z.object({ kind: z.literal('error-mid-stream'), afterFrames: z.number().int().min(0).default(2) }),
  /** Stream `afterFrames` frames, then go silent with the connection open. */
  z.object({ kind: z.literal('stall-mid-stream'), afterFrames: z.number().int().min(0).default(2) }),
  /** Wait `delayMs` between frames. */
  z.object({ kind: z.literal('drip'), delayMs: z.number().int().min(0) }),
  /** Answer 200 with a JSON content type and a body that is not JSON. */
  z.object({ kind: z.literal('not-json') }),
])

export type Fault = z.infer<typeof faultSchema>

/** Faults queued through the admin API, each applied to one request in arrival order. */
export class FaultQueue {
  #queue: Fault[] = []

  push(faults: readonly Fault[]): void {
    this.#queue.push(...faults)
  }

  next(): Fault | undefined {
    return this.#queue.shift()
  }

  clear(): void {
    this.#queue = []
  }

  get size(): number {
    return this.#queue.length
  }
}

/** A fault named in the `x-mock-fault` request header: JSON, or just a kind. */
export function faultFromHeader(value: string | string[] | undefined): Fault | undefined {
  const raw = Array.isArray(value) ? value[0] : value
  if (!raw) return undefined
  const parsed = faultSchema.safeParse(raw.trim().startsWith('{') ? JSON.parse(raw) : { kind: raw.trim() })
  return parsed.success ? parsed.data : undefined
}
