/**
 * Counts needed-but-hidden events as a variant's requests go out: each request as the fake
 * upstream received it is checked against what the recording says the agent needed next. Beside
 * them, separately, the strings the agent took from its own earlier tool inputs (own-inputs.ts).
 */
import { hiddenIn, type HiddenString, type RequestNeeds } from './at-risk.ts'
import { ownInputsHiddenIn, type HiddenOwnInput, type RequestOwnNeeds } from './own-inputs.ts'
import { allText } from './message-strings.ts'
import { addRequest, emptyTally, type HiddenTally } from './tally.ts'

export class HiddenCounter {
  readonly #needs: ReadonlyMap<number, RequestNeeds>
  readonly #ownNeeds: ReadonlyMap<number, RequestOwnNeeds>
  #tally: HiddenTally = emptyTally
  #ownTally: HiddenTally = emptyTally

  constructor(needs: readonly RequestNeeds[], ownNeeds: readonly RequestOwnNeeds[] = []) {
    this.#needs = new Map(needs.map((entry) => [entry.index, entry]))
    this.#ownNeeds = new Map(ownNeeds.map((entry) => [entry.index, entry]))
  }

  /** One request: its body as sent upstream, or undefined when it never got there (refused before sending). */
  request(index: number, sentBody: string | undefined): void {
    // A request never sent shows nothing and hides nothing: it is counted as refused, not here.
    if (sentBody === undefined) return
    const needs = this.#needs.get(index)
    const ownNeeds = this.#ownNeeds.get(index)
    let hidden: HiddenString[] = []
    let ownHidden: HiddenOwnInput[] = []
    const anyNeeded = (needs?.needed.length ?? 0) > 0 || (ownNeeds?.needed.length ?? 0) > 0
    if (anyNeeded) {
      const body = parsed(sentBody)
      const sentText = allText(body)
      if (needs && needs.needed.length > 0) hidden = hiddenIn(needs, body, sentText)
      if (ownNeeds && ownNeeds.needed.length > 0) ownHidden = ownInputsHiddenIn(ownNeeds, body, sentText)
    }
    this.#tally = addRequest(this.#tally, index, hidden)
    this.#ownTally = addRequest(this.#ownTally, index, ownHidden)
  }

  /** The measure: strings from tool outputs. */
  get tally(): HiddenTally {
    return this.#tally
  }

  /** The second count: strings from the agent's own earlier tool inputs, in no tool output. */
  get ownInputTally(): HiddenTally {
    return this.#ownTally
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
