import { createHash } from 'node:crypto'
import { isJsonObject, type Json } from '../util/json.ts'

/** `treated`: ctxgate rewrites as usual; `control`: forwarded exactly as sent, to compare bills with. */
export type Arm = 'treated' | 'control'

/**
 * The arm of a session, from what never changes in it before the client compacts: its kind and its
 * first user message. A uniform draw from the hash, so a share of `holdout` of the sessions are control.
 */
export function armOf(kind: string, firstUserMessage: string, holdout: number): Arm {
  if (holdout <= 0) return 'treated'
  if (holdout >= 1) return 'control'
  const digest = createHash('sha256').update(kind).update('\u0000').update(firstUserMessage).digest()
  // 48 bits of the digest as a fraction in [0, 1): far finer than any share a user sets.
  const draw = digest.readUIntBE(0, 6) / 2 ** 48
  return draw < holdout ? 'control' : 'treated'
}

/**
 * The text of a request's first user message, the same in Anthropic Messages and Chat Completions
 * (`messages`) and the Responses API (`input`, a string or items). Cache markers the client moves
 * from request to request (`cache_control`) are left out, so the key stays the same all session.
 */
export function firstUserMessage(body: Json): string {
  const list = Array.isArray(body['messages']) ? body['messages'] : body['input']
  if (typeof list === 'string') return list
  if (!Array.isArray(list)) return ''
  const first = list.find((item) => isJsonObject(item) && item['role'] === 'user')
  return isJsonObject(first) ? contentText(first['content']) : ''
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return JSON.stringify(content ?? null)
  return content.map((part) => (isJsonObject(part) ? partText(part) : JSON.stringify(part))).join('\u0001')
}

function partText(part: Readonly<Record<string, unknown>>): string {
  if (typeof part['text'] === 'string') return part['text']
  const { cache_control: _marker, ...rest } = part
  return JSON.stringify(rest)
}

/** What the hook remembers per session: its arm (so a compaction never moves it) and its last prompt size. */
interface SessionMark {
  readonly arm: Arm
  readonly lastEstimate: number
}

/** Sessions remembered per process; the least recently seen go first. */
const sessionsKept = 20_000

/** A client compaction shows as the prompt falling below this share of the one before it. */
const compactionShrink = 0.5

/**
 * Each session's arm, decided on its first request and then kept (a compaction rewrites the first
 * user message), and whether this request's prompt shrank as a client's own compaction makes it.
 */
export class HoldoutArms {
  readonly #sessions = new Map<string, SessionMark>()
  readonly #holdout: number

  constructor(holdout: number) {
    this.#holdout = holdout
  }

  see(
    sessionId: string,
    decide: () => { kind: string; firstUserMessage: string },
    promptEstimate: number,
  ): { arm: Arm; clientCompacted: boolean } {
    const previous = this.#sessions.get(sessionId)
    const arm = previous?.arm ?? (this.#holdout <= 0 ? 'treated' : armFromKey(decide(), this.#holdout))
    const clientCompacted = previous !== undefined && promptEstimate < previous.lastEstimate * compactionShrink
    this.#sessions.delete(sessionId)
    this.#sessions.set(sessionId, { arm, lastEstimate: promptEstimate })
    if (this.#sessions.size > sessionsKept) this.#sessions.delete(this.#sessions.keys().next().value as string)
    return { arm, clientCompacted }
  }
}

function armFromKey(key: { kind: string; firstUserMessage: string }, holdout: number): Arm {
  return armOf(key.kind, key.firstUserMessage, holdout)
}
