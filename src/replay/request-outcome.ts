import { createParser } from 'eventsource-parser'
import type { Usage } from './billing.ts'

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
}

const tooLong = /prompt is too long: (\d+) tokens > (\d+) maximum/

/** Reads an Anthropic Messages answer, JSON or SSE, into an outcome. */
export function readAnthropicAnswer(index: number, status: number, contentType: string, body: string): RequestOutcome {
  if (status !== 200) {
    const message = errorMessageOf(body)
    const match = tooLong.exec(message)
    return { index, status, refusedForLength: match !== null, promptTokens: match ? Number(match[1]) : 0, usage: emptyUsage, error: message }
  }
  const usage = contentType.startsWith('text/event-stream') ? usageFromStream(body) : usageFromJson(JSON.parse(body) as Record<string, unknown>)
  return { index, status, refusedForLength: false, promptTokens: usage.inputTokens + usage.cacheWrite5mTokens + usage.cacheWrite1hTokens + usage.cacheReadTokens, usage }
}

const emptyUsage: Usage = { inputTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, cacheReadTokens: 0, outputTokens: 0 }

function usageFromJson(message: Record<string, unknown>): Usage {
  return toUsage((message['usage'] as Record<string, unknown> | undefined) ?? {})
}

/** Input side from message_start, overwritten by non-null message_delta values; output from the last delta (model-apis §4.4). */
function usageFromStream(body: string): Usage {
  let merged: Record<string, unknown> = {}
  const parser = createParser({
    onEvent: (event) => {
      if (event.event !== 'message_start' && event.event !== 'message_delta') return
      const data = JSON.parse(event.data) as Record<string, unknown>
      const usage = (event.event === 'message_start' ? (data['message'] as Record<string, unknown>)['usage'] : data['usage']) as Record<string, unknown> | undefined
      for (const [key, value] of Object.entries(usage ?? {})) if (value !== null && value !== undefined) merged = { ...merged, [key]: value }
    },
  })
  parser.feed(body)
  return toUsage(merged)
}

const number = (value: unknown): number => (typeof value === 'number' ? value : 0)

function toUsage(usage: Record<string, unknown>): Usage {
  const breakdown = usage['cache_creation'] as Record<string, unknown> | undefined
  const written = number(usage['cache_creation_input_tokens'])
  const oneHour = number(breakdown?.['ephemeral_1h_input_tokens'])
  return {
    inputTokens: number(usage['input_tokens']),
    cacheWrite5mTokens: breakdown ? written - oneHour : written,
    cacheWrite1hTokens: oneHour,
    cacheReadTokens: number(usage['cache_read_input_tokens']),
    outputTokens: number(usage['output_tokens']),
  }
}

function errorMessageOf(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: string } }
    return parsed.error?.message ?? body.slice(0, 300)
  } catch {
    return body.slice(0, 300)
  }
}
