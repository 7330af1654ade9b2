import { createParser } from 'eventsource-parser'
import { createAnthropicUsageReader } from '../providers/anthropic/usage.ts'
import { promptTokensOf, zeroUsage, type Usage } from '../model-call/usage.ts'
import { isEventStream } from '../util/headers.ts'

/** What one replayed request cost, as the upstream reported it. */
export interface RequestOutcome {
  readonly index: number
  readonly status: number
  /** Refused because the prompt did not fit the model's window. */
  readonly refusedForLength: boolean
  /** Prompt tokens as the upstream counted them (from the refusal message when refused). */
  readonly promptTokens: number
  readonly usage: Usage
  readonly error?: string
  /** ctxgate's own size estimate of the request as sent (its x-ctxgate-estimate-after), when it went through ctxgate. */
  readonly ctxgateEstimate?: number
  /** The stretch of the recording between client compactions it belongs to (a new one starts a new history). */
  readonly segment?: number
  /** ctxgate made a new batch of edits on it (its x-ctxgate-edit said `batch`). */
  readonly ctxgateBatch?: boolean
}

const tooLong = /prompt is too long: (\d+) tokens > (\d+) maximum|exceed context limit: (\d+) \+ \d+ > (\d+)/

/** Reads an Anthropic Messages answer, JSON or SSE, into an outcome. */
export function readAnthropicAnswer(index: number, status: number, contentType: string, body: string): RequestOutcome {
  if (status !== 200) {
    const message = errorMessageOf(body)
    const match = tooLong.exec(message)
    return {
      index,
      status,
      refusedForLength: match !== null,
      promptTokens: match ? Number(match[1] ?? match[3]) : 0,
      usage: zeroUsage,
      error: message,
    }
  }
  const reader = createAnthropicUsageReader()
  let usage: Usage | undefined
  if (isEventStream(contentType)) {
    const parser = createParser({ onEvent: (event) => reader.onEvent(event) })
    parser.feed(body)
    usage = reader.result()
  } else usage = reader.fromJson(JSON.parse(body))
  const counted = usage ?? zeroUsage
  return { index, status, refusedForLength: false, promptTokens: promptTokensOf(counted), usage: counted }
}

function errorMessageOf(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: string } }
    return parsed.error?.message ?? body.slice(0, 300)
  } catch {
    return body.slice(0, 300)
  }
}
