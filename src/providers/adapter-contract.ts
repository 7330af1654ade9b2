import type { TokenEstimator } from '../rewrite/estimate.ts'
import { hashText } from '../rewrite/hash.ts'
import type { ChatView, Edit } from '../rewrite/types.ts'
import { isJsonObject, type Json } from '../util/json.ts'

/** What the pipeline asks an adapter to write back besides the edits. */
export interface ApplyOptions {
  readonly edits: readonly Edit[]
  /** The note to add (at the head unless `systemNoteAt` says otherwise), identically on every request of a session. */
  readonly systemNote?: string
  /** `edit-point`: the note goes right after the earliest edited tool result (formats with `noteAtEditPoint`), not the head. */
  readonly systemNoteAt?: 'head' | 'edit-point'
  readonly sessionId: string
  /** Index, in the rewritten message list, of the previous request's last message (for a cache breakpoint). */
  readonly previousTail?: number
  /** The tool result the next batch of edits will start at: a breakpoint just ahead of it lets that batch read the prefix. */
  readonly nextEditResult?: string
  /** With a new batch: the result the batch after it will start at (its block is written fresh now, so a marker there writes an entry). */
  readonly followingEditResult?: string
  readonly minCacheableTokens: number
  /** The model binds thinking signatures to their prefix (https://platform.claude.com/docs/en/build-with-claude/preserved-thinking). */
  readonly thinkingBound: boolean
  /** Earliest message an edit touched, or -1. */
  readonly firstEditedMessage: number
  /** Sizes of what is written back are estimated from the result itself, so a second pass sees the same numbers. */
  readonly estimator: TokenEstimator
  /** Mark the stable head (tools, system) with a one-hour TTL where the client set no TTL of its own. */
  readonly stableTtl?: '1h'
}

export interface Applied {
  readonly body: Json
  /** Headers to set or merge into the upstream request (e.g. anthropic-beta). */
  readonly headers: Readonly<Record<string, string>>
  /** Index of the last message in the rewritten list. */
  readonly tail: number
  /** False when the body says exactly what the client sent: its own bytes go upstream, not a re-serialization. */
  readonly changed: boolean
  /** Cache breakpoints the adapter added (formats with explicit breakpoints only). */
  readonly breakpoints?: number
  /**
   * The result the next batch's entry was written just ahead of, when the adapter chose it over
   * `followingEditResult` (a marker that both reads the entry relied on and writes the next one);
   * null when no marker could go there, so no entry backs the promise.
   */
  readonly promisedResult?: string | null
}

export interface SessionHints {
  /** An identity the client sent (metadata.user_id, prompt_cache_key, user). */
  readonly explicit?: string
  /** Tells conversations within one identity apart (a sub-agent shares its parent's user id). */
  readonly fingerprint: string
  /** Tells agents apart across their sessions (see `agentFingerprint`): what finished sessions are grouped by. */
  readonly agent?: string
}

/** One wire format's view of a chat request: reads turns and tool results, writes edits back, touches nothing else. */
export interface ChatAdapter {
  /** Throws NotAChatRequest when the body is not something this adapter can rewrite. */
  view(body: Json, estimator: TokenEstimator): ChatView
  /** `view` gives the head's size, so the fingerprint need not serialize system and tools again. */
  sessionHints(body: Json, view: ChatView): SessionHints
  apply(body: Json, view: ChatView, options: ApplyOptions): Applied
  /**
   * Tokens the view counts for a dropped-history note beyond its text, once `apply` has written it
   * into the first message: the planner adds them when it sizes a drop.
   */
  readonly dropNoteFraming: number
  /** The format allows a system message mid-conversation, so the note can join at the edit point and keep the prefix before it cached. */
  readonly noteAtEditPoint?: boolean
  /**
   * `apply` never changes its input and shares every unchanged part of it with its output, so the
   * body can be written as the client's own bytes with only the changed parts replaced (util/splice-json.ts).
   */
  readonly copiesOnWrite?: boolean
  /**
   * `apply` dropping every message after the first leaves a body that depends on `messages[0]` and
   * the other top-level fields only, so the note's cost measured on it can be kept (rewrite-hook/note-cost-memo.ts).
   */
  readonly noteCostFromFirstMessage?: boolean
  /** Makes a streamed request report usage when the client did not ask; true when it had to. */
  requestUsage?(body: Json): boolean
  /**
   * What `apply` returns when it would write the body exactly as sent (no edit, no note, no marker,
   * no header), found without writing it; undefined when it would change anything or cannot tell
   * cheaply. Nothing is marked, so `stableTtl` is not read: a request the hook sends as the client
   * wrote it can go before the TTL and the request's records are computed (rewrite-hook/prepare-with.ts).
   */
  asSent?(body: Json, view: ChatView, options: Omit<ApplyOptions, 'stableTtl'>): Applied | undefined
}

/** The body is valid JSON but not a chat request this adapter understands: forward it untouched. */
export class NotAChatRequest extends Error {}

/** The entries of a request's list field (`messages`, `input`), each an object, or NotAChatRequest naming the first that is not. */
export function objectEntries(list: readonly unknown[], field: string): Json[] {
  return list.map((entry, index) => {
    if (!isJsonObject(entry)) throw new NotAChatRequest(`${field}.${index} is not an object`)
    return entry
  })
}

/**
 * Tells conversations apart: the model, the size of system and tools (from the view, already
 * counted) and the first message — what differs between a main agent and its sub-agents.
 */
export function conversationFingerprint(view: ChatView, first: unknown): string {
  // A re-sent first message is the parse memo's frozen value: its text is not written out and hashed again.
  const known = isJsonObject(first) && Object.isFrozen(first) ? fingerprints.get(first) : undefined
  if (known !== undefined && known.model === view.model && known.headTokens === view.headTokens) return known.value
  const content = isJsonObject(first) ? first['content'] : undefined
  const firstKey = typeof content === 'string' ? content : JSON.stringify(first ?? null)
  const value = hashText(`${view.model}\u0000${view.headTokens}\u0000${firstKey.length}\u0000${sampled(firstKey)}`)
  if (isJsonObject(first) && Object.isFrozen(first))
    fingerprints.set(first, { model: view.model, headTokens: view.headTokens, value })
  return value
}

/** The last fingerprint made from each frozen first message, with the model and head size it was made with. */
const fingerprints = new WeakMap<
  object,
  { readonly model: string; readonly headTokens: number; readonly value: string }
>()

/** Hashed in full up to this length; longer first messages by their two ends (and length), so the cost stays flat. */
const fingerprintSampleChars = 4096

function sampled(text: string): string {
  return text.length <= 2 * fingerprintSampleChars
    ? text
    : text.slice(0, fingerprintSampleChars) + text.slice(-fingerprintSampleChars)
}

/** The opening of the system prompt an agent is known by: its fixed instructions come first. */
const agentSystemChars = 2048

/**
 * The same agent in every session: the names of its tools and the opening of its system prompt. Not
 * the whole prompt: agents append the date, working directory or git status, which differ per session.
 */
export function agentFingerprint(tools: unknown, systemParts: readonly unknown[]): string {
  const names = Array.isArray(tools) ? (tools as unknown[]).map(toolName).join('\u0001') : ''
  let system = ''
  for (const part of systemParts) {
    if (system.length >= agentSystemChars) break
    const text = contentText(part)
    // An absent part adds nothing, so the same prompt reads the same in every wire format.
    if (text.length > 0) system += `${text}\u0001`
  }
  return hashText(`${names}\u0000${system.slice(0, agentSystemChars)}`, 3)
}

/** A tool's name in any wire format (`name`, or `function.name`), else its type (built-in tools). */
function toolName(tool: unknown): string {
  if (!isJsonObject(tool)) return ''
  const inner = tool['function']
  const name = isJsonObject(inner) ? inner['name'] : tool['name']
  return typeof name === 'string' ? name : String(tool['type'] ?? '')
}

/** Text of a string, a text block, or a list of text blocks (one level: nothing nested is walked). */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content
  if (Array.isArray(content)) return (content as unknown[]).map(blockText).join('\n')
  return blockText(content)
}

function blockText(block: unknown): string {
  return isJsonObject(block) && typeof block['text'] === 'string' ? block['text'] : ''
}
