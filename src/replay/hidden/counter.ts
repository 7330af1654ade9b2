/**
 * Counts needed-but-hidden events as a variant's requests go out: each request as the fake
 * upstream received it is checked against what the recording says the agent needed next.
 */
import { hiddenIn, type HiddenString, type RequestNeeds } from './at-risk.ts'
import { addRequest, emptyTally, type HiddenTally } from './tally.ts'

export class HiddenCounter {
  readonly #needs: ReadonlyMap<number, RequestNeeds>
  #tally: HiddenTally = emptyTally

  constructor(needs: readonly RequestNeeds[]) {
    this.#needs = new Map(needs.map((entry) => [entry.index, entry]))
  }

  /** One request: its body as sent upstream, or undefined when it never got there (refused before sending). */
  request(index: number, sentBody: string | undefined): void {
    // A request never sent shows nothing and hides nothing: it is counted as refused, not here.
    if (sentBody === undefined) return
    const needs = this.#needs.get(index)
    let hidden: HiddenString[] = []
    if (needs && needs.needed.length > 0) hidden = hiddenIn(needs, parsed(sentBody))
    this.#tally = addRequest(this.#tally, index, hidden)
  }

  get tally(): HiddenTally {
    return this.#tally
  }
}

function parsed(body: string): unknown {
  try {
    return JSON.parse(body)
  } catch {
    // Not JSON (should not happen for a chat request): search the raw text instead.
    return body
  }
}
