/**
 * For each request of a recorded run, the strings the agent's next message needed from tool
 * output: distinctive, not in the system prompt, the tools, the first user message or the agent's
 * own earlier messages, and present in some tool output of the request as the agent sent it. Any
 * of these missing from the request a policy really sent is "needed but hidden" (docs/quality.md).
 * It depends on the recording only, so it is computed once and checked against every variant.
 */
import { clearRisks, type ClearRisk, type ToolCall } from '../../rewrite/clear-order.ts'
import { callTarget, type ToolKind } from '../../rewrite/tool-kind.ts'
import type { Conversation, Message } from '../conversation.ts'
import { fateOf, sentResults, type SourceFate } from './fate.ts'
import { distinctiveStrings, type DistinctiveString } from '../../rewrite/distinctive.ts'
import { agentStrings, allText, resultText } from './message-strings.ts'

export interface NeededString extends DistinctiveString {
  /** Tool whose output held it (the newest such output), and what kind of tool that is. */
  readonly sourceTool: string
  readonly sourceKind: ToolKind
  /** The call whose result that output is, so a request as sent can say what became of it. */
  readonly sourceId: string
  /** Its clearing class at this request, from the calls so far (src/rewrite/clear-order.ts). */
  readonly sourceRisk: ClearRisk
  /** Tool rounds between that output's call and the request. */
  readonly age: number
}

export interface RequestNeeds {
  /** 1-based, as the replay numbers requests. */
  readonly index: number
  readonly needed: readonly NeededString[]
}

interface ToolOutput {
  readonly id: string
  readonly text: string
  readonly tool: string
  readonly kind: ToolKind
  /** Index of the calling round, counted from the start of the segment. */
  readonly round: number
}

/** One entry per request, in the order the replay sends them (the k-th assistant reply of each segment). */
export function neededStrings(conversation: Conversation): RequestNeeds[] {
  const needs: RequestNeeds[] = []
  const head = `${conversation.system}\n${allText(conversation.tools)}`
  for (const messages of conversation.segments) {
    let known = `${head}\n${allText(messages[0] ?? {})}`
    const outputs: ToolOutput[] = []
    const calls = new Map<string, { name: string; input: unknown; round: number }>()
    let rounds = 0
    messages.forEach((message, position) => {
      if (message.role === 'assistant' && position > 0) {
        // Classed from the calls so far, only when something is needed (most requests need nothing).
        let risks: ReadonlyMap<string, ClearRisk> | undefined
        const riskOf = (id: string): ClearRisk =>
          (risks ??= clearRisks([...calls].map(([callId, call]): ToolCall => ({ id: callId, ...call })))).get(id) ??
          'output'
        needs.push({ index: needs.length + 1, needed: neededBy(message, known, outputs, rounds, riskOf) })
      }
      if (message.role === 'assistant') {
        if (position > 0) known += `\n${allText(message.content)}`
        if (message.content.some((block) => block.type === 'tool_use')) rounds++
      }
      collect(message, calls, outputs, rounds)
    })
  }
  return needs
}

function collect(
  message: Message,
  calls: Map<string, { name: string; input: unknown; round: number }>,
  outputs: ToolOutput[],
  rounds: number,
): void {
  for (const block of message.content) {
    if (block.type === 'tool_use') calls.set(block.id, { name: block.name, input: block.input, round: rounds - 1 })
    if (block.type !== 'tool_result') continue
    const call = calls.get(block.tool_use_id)
    const name = call?.name ?? ''
    outputs.push({
      id: block.tool_use_id,
      text: resultText(block),
      tool: name,
      kind: call ? callTarget(name, call.input).kind : 'other',
      round: call?.round ?? rounds - 1,
    })
  }
}

function neededBy(
  next: Message,
  known: string,
  outputs: readonly ToolOutput[],
  rounds: number,
  riskOf: (id: string) => ClearRisk,
): NeededString[] {
  const needed: NeededString[] = []
  for (const candidate of distinctiveStrings(agentStrings(next))) {
    if (known.includes(candidate.text)) continue
    const source = findNewest(outputs, candidate.text)
    if (!source) continue
    needed.push({
      ...candidate,
      sourceTool: source.tool,
      sourceKind: source.kind,
      sourceId: source.id,
      sourceRisk: riskOf(source.id),
      age: Math.max(0, rounds - 1 - source.round),
    })
  }
  return needed
}

function findNewest(outputs: readonly ToolOutput[], text: string): ToolOutput | undefined {
  for (let index = outputs.length - 1; index >= 0; index--) {
    const output = outputs[index] as ToolOutput
    if (output.text.includes(text)) return output
  }
  return undefined
}

/** A needed string the request as sent no longer showed, with what became of the output it came from. */
export interface HiddenString extends NeededString {
  readonly fate: SourceFate
}

/** The needed strings a request as sent no longer shows anywhere. */
export function hiddenIn(needs: RequestNeeds, sentBody: unknown, sent = allText(sentBody)): HiddenString[] {
  if (needs.needed.length === 0) return []
  const hidden = needs.needed.filter((needed) => !sent.includes(needed.text))
  if (hidden.length === 0) return []
  const results = sentResults(sentBody)
  return hidden.map((needed) => ({ ...needed, fate: fateOf(results, needed.sourceId) }))
}
