/**
 * One WebSocket's conversation as ctxgate relayed it: every input item sent so far and the output
 * items of each response, so a message that only carries `previous_response_id` and new items can
 * be estimated and edited as a whole. Items are kept as their JSON bytes, not as parsed objects (which
 * take about four times as much), so what is counted is what is held. Pure: no I/O.
 */
import type { ClientMessage } from './client-message.ts'
import { HistoryBudget } from './history-budget.ts'

/** How to treat one `response.create` message. */
export type ConversationPlan =
  /**
   * The whole input is known: the items (or the client's own string input), from which `inputBytes`
   * writes what a stateless request would carry as `input`. No JSON of the whole input is kept: a
   * socket's last turn lives until its next message, and it would be a second copy of the history.
   */
  | { readonly kind: 'full'; readonly items: readonly Buffer[]; readonly bytes: number; readonly text?: string }
  /** `previous_response_id` names a response this socket never had, and the service keeps no other. */
  | { readonly kind: 'not-found'; readonly id: string }
  /** History ctxgate does not hold (over the bound, or a stored response it never saw): forward as sent. */
  | { readonly kind: 'untracked' }

export type CommitResult = 'kept' | 'over-bound' | 'over-budget' | 'untracked'

/** A kept item's own bytes plus, as an estimate, its Buffer object and its slot in the list. */
export const itemOverheadBytes = 160

export class SocketConversation {
  readonly #maxBytes: number
  readonly #budget: HistoryBudget
  /** Undefined while ctxgate does not know the whole history behind the latest response. */
  #items: readonly Buffer[] | undefined = []
  #bytes = 0
  #latestId: string | undefined
  #released = false

  /** `maxBytes` bounds this socket; `budget` is shared by every socket. */
  constructor(maxBytes: number, budget: HistoryBudget = new HistoryBudget(Number.POSITIVE_INFINITY)) {
    this.#maxBytes = maxBytes
    this.#budget = budget
  }

  get latestResponseId(): string | undefined {
    return this.#latestId
  }

  /** The memory this socket's history holds (item bytes and their estimated overhead). */
  get bytes(): number {
    return this.#bytes
  }

  get tracked(): boolean {
    return this.#items !== undefined
  }

  plan(message: ClientMessage): ConversationPlan {
    const previous = message.fields['previous_response_id']
    const own = message.input
    if (own === undefined) return { kind: 'untracked' }
    if (previous === undefined || previous === null) {
      return {
        kind: 'full',
        items: own.items,
        bytes: sizeOf(own.items),
        ...(own.text !== undefined ? { text: own.text } : {}),
      }
    }
    if (typeof previous !== 'string') return { kind: 'untracked' }
    if (previous === this.#latestId) {
      if (this.#items === undefined) return { kind: 'untracked' }
      const items = [...this.#items, ...own.items]
      return { kind: 'full', items, bytes: this.#bytes + sizeOf(own.items) }
    }
    // With store:false the service keeps only the socket's latest response; a stored one may exist upstream.
    return message.fields['store'] === false ? { kind: 'not-found', id: previous } : { kind: 'untracked' }
  }

  /** A response finished: it becomes the one `previous_response_id` may continue. */
  commit(plan: ConversationPlan, responseId: string, output: readonly unknown[]): CommitResult {
    this.#latestId = responseId
    if (plan.kind !== 'full' || this.#released) return this.#forget('untracked')
    const outputItems = output.map(encodeItem)
    const bytes = plan.bytes + sizeOf(outputItems)
    if (bytes > this.#maxBytes) return this.#forget('over-bound')
    if (!this.#budget.resize(this.#bytes, bytes)) {
      this.#bytes = 0
      return this.#forget('over-budget')
    }
    this.#items = [...plan.items, ...outputItems]
    this.#bytes = bytes
    return 'kept'
  }

  /** The socket closed: its history's share of the budget goes back. */
  release(): void {
    this.#released = true
    this.#forget('untracked')
  }

  #forget(result: CommitResult): CommitResult {
    this.#budget.release(this.#bytes)
    this.#items = undefined
    this.#bytes = 0
    return result
  }
}

const listOpen = Buffer.from('[')
const listComma = Buffer.from(',')
const listClose = Buffer.from(']')

/** The `input` of a full plan as JSON, in parts (the kept items themselves, not copies): the client's string, or the list. */
export function inputBytes(plan: Extract<ConversationPlan, { kind: 'full' }>): Buffer[] {
  if (plan.text !== undefined) return [Buffer.from(JSON.stringify(plan.text))]
  const parts: Buffer[] = [listOpen]
  plan.items.forEach((item, index) => parts.push(...(index === 0 ? [item] : [listComma, item])))
  parts.push(listClose)
  return parts
}

/** An item's JSON in a buffer of its own: a slice of Node's shared pool would keep the whole 8 KiB slab alive. */
export function encodeItem(item: unknown): Buffer {
  const json = JSON.stringify(item) ?? 'null'
  const buffer = Buffer.allocUnsafeSlow(Buffer.byteLength(json))
  buffer.write(json)
  return buffer
}

function sizeOf(items: readonly Buffer[]): number {
  let total = 0
  for (const item of items) total += item.length + itemOverheadBytes
  return total
}
