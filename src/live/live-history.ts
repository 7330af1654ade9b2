import type { LiveEvent } from './live-event.ts'
import type { ModelPrices } from '../billing/prices.ts'
import { addEvent, type SessionSummary } from './session-summary.ts'

/** One session on the page: its totals since first seen and its newest requests, oldest first. */
export interface SessionView {
  readonly summary: SessionSummary
  readonly requests: readonly LiveEvent[]
}

/** Everything the page shows, most recently seen session first. */
export interface LiveSnapshot {
  readonly sessions: readonly SessionView[]
}

export interface HistoryBounds {
  /** Sessions kept; the least recently seen goes first. */
  readonly maxSessions: number
  /** Requests kept per session; the oldest goes first (totals keep counting them). */
  readonly maxRequestsPerSession: number
}

export const defaultHistoryBounds: HistoryBounds = { maxSessions: 50, maxRequestsPerSession: 200 }

/** The live page's memory: bounded in sessions and in requests per session. */
export class LiveHistory {
  readonly #sessions = new Map<string, { summary: SessionSummary; requests: LiveEvent[] }>()
  readonly #bounds: HistoryBounds
  readonly #prices: readonly ModelPrices[]

  constructor(bounds: HistoryBounds = defaultHistoryBounds, prices: readonly ModelPrices[] = []) {
    this.#bounds = bounds
    this.#prices = prices
  }

  /** Adds one request and returns its session's new summary. */
  record(event: LiveEvent): SessionSummary {
    const entry = this.#sessions.get(event.session)
    const summary = addEvent(entry?.summary, event, this.#prices)
    const requests = entry?.requests ?? []
    requests.push(event)
    if (requests.length > this.#bounds.maxRequestsPerSession)
      requests.splice(0, requests.length - this.#bounds.maxRequestsPerSession)
    this.#sessions.delete(event.session)
    this.#sessions.set(event.session, { summary, requests })
    while (this.#sessions.size > this.#bounds.maxSessions)
      this.#sessions.delete(this.#sessions.keys().next().value as string)
    return summary
  }

  summaryOf(session: string): SessionSummary | undefined {
    return this.#sessions.get(session)?.summary
  }

  snapshot(): LiveSnapshot {
    const sessions = [...this.#sessions.values()]
      .toReversed()
      .map(({ summary, requests }) => ({ summary, requests: [...requests] }))
    return { sessions }
  }
}
