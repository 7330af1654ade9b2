import type { ClearableInput } from './cleared-input.ts'

/**
 * The provider-neutral view of a chat request that the rewrite core works on, the edits it
 * decides, and the per-session state that keeps those edits frozen. Adapters (src/providers)
 * build the view from native JSON and write the edits back.
 */
export type Role = 'user' | 'assistant' | 'tool' | 'system'

export interface ToolResultView {
  /** tool_use_id / tool_call_id / call_id */
  readonly id: string
  readonly message: number
  /** Estimated tokens of the content alone (the block or message around it is counted in its message). */
  readonly tokens: number
  /** Identity of the result's content, so a frozen decision applies only to the same bytes. */
  readonly hash: string
  /** The content as text (for fold summaries); images and other parts are described, not kept. */
  readonly text: string
}

export interface MessageView {
  readonly role: Role
  readonly tokens: number
  readonly hash: string
  /** A user message with human text and no tool results: a user turn starts here. */
  readonly startsUserTurn: boolean
  readonly toolCallIds: readonly string[]
  /** Tool names of those calls, same order (absent when the adapter cannot tell): for tools never cleared. */
  readonly toolCallNames?: readonly string[]
  /** Inputs of those calls as the client sent them (an object, or OpenAI's JSON string): what a result can be fetched again with. */
  readonly toolCallInputs?: readonly unknown[]
  /** Those inputs in the form they are written back in when cleared (cleared-input.ts); undefined where the adapter never clears one. */
  readonly toolCallClearable?: readonly (ClearableInput | undefined)[]
  readonly toolResults: readonly ToolResultView[]
  readonly hasThinking: boolean
}

export interface ChatView {
  readonly model: string
  /** Tokens outside the message list: system, tools, framing. */
  readonly headTokens: number
  readonly messages: readonly MessageView[]
  /** The reply size the client asked for (max_tokens and the like); 0 when unset. */
  readonly maxOutputTokens: number
  /**
   * The client asked the server to manage the context (context editing, compaction, or a
   * compaction block or item it carries): ctxgate then makes no content edits of its own.
   */
  readonly serverManaged?: boolean
}

/** `fold-read`: a file read folded to the lines the agent is likely to quote (notes.ts, readFold). */
export type ResultAction = 'fold' | 'clear' | 'fold-read'

export interface ReplaceToolResult {
  readonly kind: 'replace-tool-result'
  readonly id: string
  readonly action: ResultAction
  readonly text: string
}

/** Remove messages [from, to) and add `note` to the first message (which always stays). */
export interface DropMessages {
  readonly kind: 'drop-messages'
  readonly from: number
  readonly to: number
  readonly scope: 'turns' | 'rounds'
  readonly note: string
}

/** Replace an old call's input (its long strings cleared, cleared-input.ts): call id, name and pairing stay. */
export interface ClearToolInput {
  readonly kind: 'clear-tool-input'
  /** tool_use id / tool_call id / call_id */
  readonly id: string
  /** The input in the call's own form: an object, or a string (JSON arguments or free text). */
  readonly input: unknown
}

export type Edit = ReplaceToolResult | DropMessages | ClearToolInput

/**
 * A decision taken on an earlier request of the session, re-applied byte for byte. Its text is not
 * stored: it is a pure function of the content, so it comes out the same on any replica.
 */
export interface FrozenResult {
  readonly hash: string
  readonly action: ResultAction
  /** The session's request number that decided it (re-fetches are counted within a window of it); absent in older stores. */
  readonly at?: number
}

export interface FrozenDrop {
  /** Index of the first kept message after the first one, in the client's message list. */
  readonly keepFrom: number
  /** Hash of that message, so the drop applies only while the client's history is unchanged. */
  readonly hash: string
  readonly scope: 'turns' | 'rounds'
}

/** A result ctxgate had cleared or folded and sent whole again once the agent showed it needs it (restore.ts). */
export interface RestoredResult {
  readonly hash: string
  /** The session's request number that restored it. */
  readonly at?: number
}

/** An old call's input ctxgate cleared, by call id: re-applied while the client sends the same input. */
export interface FrozenInput {
  readonly hash: string
  readonly at?: number
}

export interface FrozenDecisions {
  readonly results: Readonly<Record<string, FrozenResult>>
  /** Old tool inputs cleared (cleared-input.ts), by call id; absent in stores written before they were. */
  readonly inputs?: Readonly<Record<string, FrozenInput>>
  readonly drop?: FrozenDrop
  /** Results restored on use: sent whole, and left out of below-budget batches from then on. */
  readonly restored?: Readonly<Record<string, RestoredResult>>
}

export const noDecisions: FrozenDecisions = { results: {} }

export type Strategy = 'clear-only' | 'batched-fold' | 'eager-fold'

export interface RewritePolicy {
  readonly strategy: Strategy
  /** Folding and eager folding leave the newest N tool rounds alone. */
  readonly keepRecentRounds: number
  /** Outputs smaller than this are never folded. */
  readonly foldMinTokens: number
  /** Results cleared per batch step. */
  readonly clearBatch: number
  /** When over budget, cut down to this fraction of it in one go, so the prefix breaks once per batch. */
  readonly lowWater: number
  /**
   * When over budget, old tool calls' long input strings may be cleared too (cleared-input.ts):
   * `superseded` only a write's whose file a later call writes again (superseded-input.ts), true
   * every old call's, false none. Absent: true.
   */
  readonly clearToolInputs?: boolean | 'superseded'
  /** When over budget, a file read the cut would clear is folded to its quotable lines instead (read-fold.ts). Absent: on. */
  readonly foldReads?: boolean
}

export interface RewriteReport {
  readonly estimatedBefore: number
  readonly estimatedAfter: number
  readonly budget: number
  readonly folded: number
  readonly cleared: number
  /** Of those, decided on this request (the batch's own count); absent in reports made before it was counted. */
  readonly newFolded?: number
  readonly newCleared?: number
  /** Results sent whole again on this request because the agent showed it needs them (restore.ts); a new edit too. */
  readonly restored?: number
  readonly droppedMessages: number
  readonly tokensRemoved: {
    readonly fold: number
    readonly clear: number
    readonly drop: number
    readonly input?: number
  }
  /** Old tool inputs cleared (re-applied and new), and of those decided on this request; absent when none. */
  readonly clearedInputs?: number
  readonly newClearedInputs?: number
  /** Edits decided on this request (not re-applied ones): each batch breaks the cache prefix once. */
  readonly newBatch: boolean
  /** The client's history no longer matched a frozen decision, which was discarded. */
  readonly clientEdited: boolean
  /** Earliest message a new or re-applied edit touched; -1 when none. */
  readonly firstEditedMessage: number
  /** Earliest message an edit decided on this request touched; -1 when none. */
  readonly firstNewEdit: number
  /** Over budget, results before the previous request's cache marker had to be cleared too. */
  readonly clearedBehindMarker?: boolean
}

export type RewriteOutcome =
  | {
      readonly kind: 'rewritten'
      readonly edits: readonly Edit[]
      readonly decisions: FrozenDecisions
      readonly report: RewriteReport
    }
  | { readonly kind: 'too-long'; readonly report: RewriteReport; readonly message: string }
