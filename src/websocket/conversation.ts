/**
 * One WebSocket's conversation as ctxgate relayed it: every input item sent so far and the output
 * items of each response, so a message that only carries `previous_response_id` and new items can
 * be estimated and edited as a whole. Pure: no I/O.
 */

type Json = Record<string, unknown>

/** How to treat one `response.create` message. */
export type ConversationPlan =
  /** The whole input is known: `input` is what a stateless request would carry. */
  | { readonly kind: 'full'; readonly input: unknown; readonly items: readonly unknown[]; readonly bytes: number }
  /** `previous_response_id` names a response this socket never had, and the service keeps no other. */
  | { readonly kind: 'not-found'; readonly id: string }
  /** History ctxgate does not hold (over the bound, or a stored response it never saw): forward as sent. */
  | { readonly kind: 'untracked' }

export type CommitResult = 'kept' | 'over-bound' | 'untracked'

export class SocketConversation {
  readonly #maxBytes: number
  /** Undefined while ctxgate does not know the whole history behind the latest response. */
  #items: readonly unknown[] | undefined = []
  #bytes = 0
  #latestId: string | undefined

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes
  }

  get latestResponseId(): string | undefined {
    return this.#latestId
  }

  get bytes(): number {
    return this.#bytes
  }

  get tracked(): boolean {
    return this.#items !== undefined
  }

  plan(message: Json): ConversationPlan {
    const previous = message['previous_response_id']
    const own = asItems(message['input'])
    if (own === undefined) return { kind: 'untracked' }
    const ownBytes = byteLength(own)
    if (previous === undefined || previous === null)
      return { kind: 'full', input: message['input'], items: own, bytes: ownBytes }
    if (typeof previous !== 'string') return { kind: 'untracked' }
    if (previous === this.#latestId) {
      if (this.#items === undefined) return { kind: 'untracked' }
      const items = [...this.#items, ...own]
      return { kind: 'full', input: items, items, bytes: this.#bytes + ownBytes }
    }
    // With store:false the service keeps only the socket's latest response; a stored one may exist upstream.
    return message['store'] === false ? { kind: 'not-found', id: previous } : { kind: 'untracked' }
  }

  /** A response finished: it becomes the one `previous_response_id` may continue. */
  commit(plan: ConversationPlan, responseId: string, output: readonly unknown[]): CommitResult {
    this.#latestId = responseId
    if (plan.kind !== 'full') return this.#forget('untracked')
    const bytes = plan.bytes + byteLength(output)
    if (bytes > this.#maxBytes) return this.#forget('over-bound')
    this.#items = [...plan.items, ...output]
    this.#bytes = bytes
    return 'kept'
  }

  #forget(result: CommitResult): CommitResult {
    this.#items = undefined
    this.#bytes = 0
    return result
  }
}

/** A string input is one user message; a list is items; anything else is not ours to read. */
function asItems(input: unknown): unknown[] | undefined {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }]
  if (input === undefined) return []
  return Array.isArray(input) ? input : undefined
}

function byteLength(items: readonly unknown[]): number {
  let total = 0
  for (const item of items) total += Buffer.byteLength(JSON.stringify(item) ?? '') + 1
  return total
}
