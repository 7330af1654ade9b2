/**
 * Cache writes no later request read before they expired, by what made them dead (docs/dead-writes.md).
 * Prompt caches are prefix caches: a request that read `read` tokens and wrote `written` more put
 * entries over the prefix span [read, read + written). A later request of the same session reads
 * into that span when it reads more than `read` tokens; reading refreshes the entry's lifetime. What
 * of the span no request read before it expired is dead. This sees only the counts the upstream
 * reports (what ctxgate can observe live); the fake upstream's own ledger is exact.
 */
export type DeadWriteCause =
  'client-compaction' | 'one-shot' | 'ctxgate-batch' | 'client-edit' | 'session-ended' | 'expired' | 'other'

export const deadWriteCauses: readonly DeadWriteCause[] = [
  'client-compaction',
  'one-shot',
  'ctxgate-batch',
  'client-edit',
  'session-ended',
  'expired',
  'other',
]

/** One answered request of a session, as far as its cache writes go. */
export interface WriteObservation {
  /** When it was answered, in milliseconds (the caller's clock). */
  readonly at: number
  readonly read: number
  readonly written5m: number
  readonly written1h: number
  /** The client asked for a summary to start over from (src/model-call/compaction-request.ts). */
  readonly clientCompaction?: boolean
  /** ctxgate made a new batch of edits on this request. */
  readonly ctxgateBatch?: boolean
  /** What broke this request's prefix against the previous one's, when something did. */
  readonly prefixBreak?: 'client_edit' | 'model_changed' | 'ctxgate_batch' | 'ttl_expired'
}

export interface DeadWrite {
  readonly cause: DeadWriteCause
  readonly tokens: number
}

const ttlMs = { '5m': 5 * 60_000, '1h': 60 * 60_000 } as const
/** Pending writes kept per session: a later read reaches back a few requests at most. */
const maxPendingPerSession = 8

interface PendingWrite {
  readonly start: number
  readonly tokens: number
  readonly ttl: number
  expiresAt: number
  /** Tokens of the span some later request read. */
  readUpTo: number
  /** Tokens of the span a later request can still read: a prefix change cuts it short. */
  limit: number
  readonly own: WriteObservation
  /** Whether any request came after it, and what broke the first one's prefix. */
  followed: boolean
  nextBreak?: WriteObservation['prefixBreak']
  nextBatch?: boolean
}

interface SessionWrites {
  readonly pending: PendingWrite[]
  requests: number
  lastAt: number
}

/**
 * Follows every session's writes and says which died, as soon as that is known: when they expire
 * unread (seen at the session's next request, or by `sweep` once the session went quiet).
 * Bounded: the least recently active sessions are settled (as ended) beyond `maxSessions`.
 */
export class DeadWriteTracker {
  readonly #sessions = new Map<string, SessionWrites>()
  readonly #maxSessions: number

  constructor(maxSessions = 10_000) {
    this.#maxSessions = maxSessions
  }

  /** A new answer of `session`; returns the writes this showed to be dead. */
  observe(session: string, observation: WriteObservation): DeadWrite[] {
    const known = this.#sessions.get(session)
    const writes = known ?? { pending: [], requests: 0, lastAt: observation.at }
    this.#sessions.delete(session)
    this.#sessions.set(session, writes)
    const dead: DeadWrite[] = []
    for (const write of writes.pending) {
      if (observation.at > write.expiresAt) continue
      if (!write.followed) {
        write.followed = true
        write.nextBreak = observation.prefixBreak
        write.nextBatch = observation.ctxgateBatch === true
      }
      const reach = Math.max(0, observation.read - write.start)
      if (Math.min(reach, write.limit) > write.readUpTo) {
        write.readUpTo = Math.min(reach, write.limit)
        write.expiresAt = observation.at + write.ttl
      }
      // A read that stops inside (or before) the span means the prefix changed there: what lies
      // beyond is a branch no later request takes, whatever it reads of its own new entries.
      write.limit = Math.min(write.limit, reach)
    }
    // Settled now: what expired before this answer, what a prefix change cut off (nothing more of it
    // can be read), what was read whole; the oldest beyond the bound too.
    const keep: PendingWrite[] = []
    for (const write of writes.pending)
      if (observation.at > write.expiresAt || write.readUpTo >= write.limit)
        dead.push(...settle(write, writes.requests + 1, false))
      else keep.push(write)
    while (keep.length >= maxPendingPerSession) dead.push(...settle(keep.shift() as PendingWrite, 2, false))
    writes.pending.length = 0
    writes.pending.push(...keep)
    writes.requests++
    writes.lastAt = observation.at
    const written = observation.written5m + observation.written1h
    if (written > 0) {
      const ttl = observation.written1h > observation.written5m ? ttlMs['1h'] : ttlMs['5m']
      writes.pending.push({
        start: observation.read,
        tokens: written,
        ttl,
        expiresAt: observation.at + ttl,
        readUpTo: 0,
        limit: written,
        own: observation,
        followed: false,
      })
    }
    while (this.#sessions.size > this.#maxSessions) {
      const [oldest, state] = this.#sessions.entries().next().value as [string, SessionWrites]
      this.#sessions.delete(oldest)
      dead.push(...settleAll(state))
    }
    return dead
  }

  /** Settles sessions quiet for longer than any entry lives (`now`: the same clock as `at`): they ended. */
  sweep(now: number): DeadWrite[] {
    const dead: DeadWrite[] = []
    for (const [session, state] of this.#sessions) {
      // Least recently active first: stop at the first session that may still send or be read.
      if (now - state.lastAt <= ttlMs['5m'] || state.pending.some((write) => write.expiresAt >= now)) break
      this.#sessions.delete(session)
      dead.push(...settleAll(state))
    }
    return dead
  }

  /** Settles every session as ended (a finished replay). */
  endAll(): DeadWrite[] {
    const dead: DeadWrite[] = []
    for (const state of this.#sessions.values()) dead.push(...settleAll(state))
    this.#sessions.clear()
    return dead
  }
}

function settleAll(state: SessionWrites): DeadWrite[] {
  return state.pending.flatMap((write) => settle(write, state.requests, true))
}

/** The unread part of a write, and why it went unread. */
function settle(write: PendingWrite, sessionRequests: number, ended: boolean): DeadWrite[] {
  const tokens = write.tokens - write.readUpTo
  if (tokens <= 0) return []
  return [{ cause: causeOf(write, sessionRequests, ended), tokens }]
}

function causeOf(write: PendingWrite, sessionRequests: number, ended: boolean): DeadWriteCause {
  if (write.own.clientCompaction) return 'client-compaction'
  if (sessionRequests <= 1) return 'one-shot'
  // A batch's own rewrite that nobody read back is the batch's loss, whatever came next.
  if (write.own.ctxgateBatch && write.readUpTo === 0) return 'ctxgate-batch'
  if (!write.followed) return ended ? 'session-ended' : 'expired'
  if (write.nextBreak === 'ctxgate_batch' || write.nextBatch) return 'ctxgate-batch'
  if (write.nextBreak === 'client_edit' || write.nextBreak === 'model_changed') return 'client-edit'
  if (write.nextBreak === 'ttl_expired') return 'expired'
  return 'other'
}

/** Dead write tokens of one whole session's answers, in order, by cause (replay: the session has ended). */
export function deadWritesOf(observations: readonly WriteObservation[]): Record<DeadWriteCause, number> {
  const tracker = new DeadWriteTracker(1)
  const dead = [...observations.flatMap((observation) => tracker.observe('run', observation)), ...tracker.endAll()]
  const totals = Object.fromEntries(deadWriteCauses.map((cause) => [cause, 0])) as Record<DeadWriteCause, number>
  for (const write of dead) totals[write.cause] += write.tokens
  return totals
}
