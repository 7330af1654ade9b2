/**
 * The second count beside needed-but-hidden (docs/quality.md, "Own inputs hidden"): strings the
 * agent's next message takes from its own earlier tool inputs and from no tool output. The issue's
 * measure never counts them (the agent wrote them), yet clearing old inputs or dropping old rounds
 * can hide them. For request k, a distinctive string of the next message is an own-input need when
 * it is in one of the agent's tool inputs before it, in no tool output of request k, and not in
 * the system prompt, the tools or the first user message. It is hidden when the request as sent
 * shows it nowhere. Disjoint from the measure by construction: that one needs a tool output.
 */
import { callTarget, type ToolKind } from '../../rewrite/tool-kind.ts'
import type { Conversation, Message } from '../conversation.ts'
import { distinctiveStrings, type DistinctiveString } from '../../rewrite/distinctive.ts'
import { agentStrings, allText, resultText } from './message-strings.ts'
import { sentInputs } from './fate.ts'

export interface OwnInputString extends DistinctiveString {
  /** The newest call whose input held it: its tool, kind and id. */
  readonly sourceTool: string
  readonly sourceKind: ToolKind
  readonly sourceId: string
  /** Tool rounds between that call and the request. */
  readonly age: number
}

export interface RequestOwnNeeds {
  /** 1-based, numbered as neededStrings numbers requests. */
  readonly index: number
  readonly needed: readonly OwnInputString[]
}

/** What became of the call that held a hidden own-input string, in the request as sent. */
export type InputFate = 'cleared' | 'dropped' | 'whole'

export interface HiddenOwnInput extends OwnInputString {
  readonly fate: InputFate
}

interface OwnCall {
  readonly id: string
  readonly name: string
  readonly kind: ToolKind
  readonly text: string
  readonly round: number
}

/** One entry per request, in the order the replay sends them (as `neededStrings` in at-risk.ts). */
export function ownInputNeeds(conversation: Conversation): RequestOwnNeeds[] {
  const needs: RequestOwnNeeds[] = []
  const head = `${conversation.system}\n${allText(conversation.tools)}`
  for (const messages of conversation.segments) {
    const known = `${head}\n${allText(messages[0] ?? {})}`
    const calls: OwnCall[] = []
    let outputs = ''
    let rounds = 0
    messages.forEach((message, position) => {
      if (message.role === 'assistant' && position > 0)
        needs.push({ index: needs.length + 1, needed: neededBy(message, known, outputs, calls, rounds) })
      if (message.role === 'assistant' && message.content.some((block) => block.type === 'tool_use')) rounds++
      outputs += collect(message, calls, rounds)
    })
  }
  return needs
}

/** Adds the message's calls to `calls`; returns the text of its tool results. */
function collect(message: Message, calls: OwnCall[], rounds: number): string {
  let outputs = ''
  for (const block of message.content) {
    if (block.type === 'tool_use')
      calls.push({
        id: block.id,
        name: block.name,
        kind: callTarget(block.name, block.input).kind,
        text: allText(block.input),
        round: rounds - 1,
      })
    else if (block.type === 'tool_result') outputs += `\n${resultText(block)}`
  }
  return outputs
}

function neededBy(
  next: Message,
  known: string,
  outputs: string,
  calls: readonly OwnCall[],
  rounds: number,
): OwnInputString[] {
  if (calls.length === 0) return []
  const needed: OwnInputString[] = []
  for (const candidate of distinctiveStrings(agentStrings(next))) {
    if (known.includes(candidate.text) || outputs.includes(candidate.text)) continue
    const source = newestHolding(calls, candidate.text)
    if (!source) continue
    needed.push({
      ...candidate,
      sourceTool: source.name,
      sourceKind: source.kind,
      sourceId: source.id,
      age: Math.max(0, rounds - 1 - source.round),
    })
  }
  return needed
}

function newestHolding(calls: readonly OwnCall[], text: string): OwnCall | undefined {
  for (let index = calls.length - 1; index >= 0; index--) {
    const call = calls[index] as OwnCall
    if (call.text.includes(text)) return call
  }
  return undefined
}

/** The own-input needs a request as sent no longer shows anywhere, with what became of the call that held each. */
export function ownInputsHiddenIn(
  needs: RequestOwnNeeds,
  sentBody: unknown,
  sentText = allText(sentBody),
): HiddenOwnInput[] {
  if (needs.needed.length === 0) return []
  const hidden = needs.needed.filter((needed) => !sentText.includes(needed.text))
  if (hidden.length === 0) return []
  const inputs = sentInputs(sentBody)
  return hidden.map((needed) => ({ ...needed, fate: inputFate(inputs, needed.sourceId) }))
}

function inputFate(inputs: ReadonlyMap<string, string>, sourceId: string): InputFate {
  const text = inputs.get(sourceId)
  if (text === undefined) return 'dropped'
  // A cleared input's note starts with "[ctxgate:" (src/rewrite/cleared-input.ts).
  return text.includes('[ctxgate:') ? 'cleared' : 'whole'
}
