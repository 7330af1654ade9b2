import { isUtf8 } from 'node:buffer'
import { limitsFor } from '../../config/model-limits.ts'
import { asksForPassthrough } from '../../request/passthrough-mode.ts'
import type { PrepareResult } from '../../request/prepared.ts'
import { NotAChatRequest } from '../../providers/adapter-contract.ts'
import type { ChatView } from '../../rewrite/types.ts'
import { parseKeepingNumbers, type ParsedKeepingNumbers } from '../../util/exact-numbers.ts'
import { isJsonObject, type Json } from '../../util/json.ts'
import type { HookRequest, ReadChat } from './hook-request.ts'
import { usageOnly } from './follow-up.ts'

/** Parse and view the body, or say why it goes on as sent (still read for usage and counted under its model). */
export async function readChat(
  request: HookRequest,
): Promise<
  { kind: 'untouched'; result: PrepareResult; reason: string; json?: Json } | { kind: 'chat'; chat: ReadChat }
> {
  const { deps, format, original, incoming } = request
  // Invalid UTF-8 would come back from a parse and re-serialize as U+FFFD: never rewrite what cannot round-trip.
  const decodable = isUtf8(original)
  const parsed = decodable ? parseJson(original) : undefined
  const json = parsed?.value
  const model = isJsonObject(json) && typeof json['model'] === 'string' ? json['model'] : 'unknown'
  const large = original.length > yieldAboveBytes
  if (large) await yieldToOtherRequests()
  const untouched = (reason: string) => ({
    kind: 'untouched' as const,
    reason,
    ...(isJsonObject(json) ? { json } : {}),
    result: {
      kind: 'forward' as const,
      prepared: {
        body: original,
        followUp: usageOnly(format, isJsonObject(json) ? { body: json, headers: incoming } : undefined),
        log: { rewrite: reason },
        accounting: { model, refusalAvoided: false },
      },
    },
  })
  if (!decodable) return untouched('invalid-utf8')
  if (!isJsonObject(json)) return untouched('not-json')
  if (!deps.config.rewrite.enabled) return untouched('disabled')
  if (asksForPassthrough(incoming)) return untouched('passthrough')
  // The first request for a model with a public tokenizer waits for it to load, once per process
  // (for any other model, the reference vocabulary: docs/estimates.md); later ones go on in the same turn.
  if (!deps.estimator.isReady(model)) await deps.estimator.ready(model)
  const estimator = deps.estimator.forModel(model)
  let view: ChatView
  try {
    view = format.adapter.view(json, estimator)
  } catch (error) {
    if (error instanceof NotAChatRequest) return untouched('not-a-chat-request')
    throw error
  }
  const limits = limitsFor(deps.config, view.model)
  if (!limits) return untouched('no-model-limits')
  if (large) await yieldToOtherRequests()
  return {
    kind: 'chat',
    chat: {
      json,
      view,
      limits,
      large,
      estimator,
      restoreNumbers: parsed?.restore ?? String,
      members: parsed?.members,
    },
  }
}

function parseJson(bytes: Buffer): ParsedKeepingNumbers | undefined {
  try {
    return parseKeepingNumbers(bytes)
  } catch {
    return undefined
  }
}

/** Bodies this large take milliseconds per phase (parse, view, serialize): other streams get the event loop between phases. */
const yieldAboveBytes = 256 * 1024

export function yieldToOtherRequests(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}
