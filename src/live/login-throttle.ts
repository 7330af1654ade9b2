/**
 * Wrong admin tokens at the live page's sign-in, counted in a sliding minute: per client address,
 * and over all addresses so that many addresses cannot guess together faster than one may alone
 * ten times over.
 */
export interface LoginThrottleLimits {
  readonly perAddress: number
  readonly overall: number
  readonly windowMs: number
}

export const defaultLoginLimits: LoginThrottleLimits = { perAddress: 5, overall: 50, windowMs: 60_000 }

/** Addresses remembered at most; the oldest go first (a flood of addresses cannot grow this). */
const maxAddresses = 10_000

export class LoginThrottle {
  readonly #limits: LoginThrottleLimits
  readonly #now: () => number
  readonly #failures = new Map<string, number[]>()
  #overall: number[] = []

  constructor(limits: LoginThrottleLimits = defaultLoginLimits, now: () => number = Date.now) {
    this.#limits = limits
    this.#now = now
  }

  /** Seconds to wait before trying again from this address, or 0 when it may try now. */
  retryAfterSeconds(address: string): number {
    const now = this.#now()
    const own = this.#recent(this.#failures.get(address) ?? [], now)
    this.#overall = this.#recent(this.#overall, now)
    const blocking =
      own.length >= this.#limits.perAddress
        ? own[own.length - this.#limits.perAddress]
        : this.#overall.length >= this.#limits.overall
          ? this.#overall[this.#overall.length - this.#limits.overall]
          : undefined
    if (blocking === undefined) return 0
    return Math.max(1, Math.ceil((blocking + this.#limits.windowMs - now) / 1000))
  }

  failed(address: string): void {
    const now = this.#now()
    const own = this.#recent(this.#failures.get(address) ?? [], now)
    own.push(now)
    this.#failures.delete(address)
    this.#failures.set(address, own)
    if (this.#failures.size > maxAddresses) this.#failures.delete(this.#failures.keys().next().value as string)
    this.#overall.push(now)
  }

  #recent(times: number[], now: number): number[] {
    const since = now - this.#limits.windowMs
    let first = 0
    while (first < times.length && (times[first] ?? 0) <= since) first++
    return first === 0 ? times : times.slice(first)
  }
}
