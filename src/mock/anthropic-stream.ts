import type { DiagnosticsJson } from './cache-diagnosis.ts'

type Json = Record<string, unknown>

function frame(event: string, data: Json): string {
  return `event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`
}

/** An answer as the Messages API streams it: message_start, each block's start, deltas and stop, message_delta, message_stop. */
export function streamFrames(message: {
  id: string
  model: string
  content: Json[]
  stopReason: string
  usage: Json
  outputTokens: number
  /** Present only when the client opted in to the cache-diagnosis beta; it rides on message_start. */
  diagnostics?: DiagnosticsJson
}): string[] {
  const frames = [
    frame('message_start', {
      message: {
        id: message.id,
        type: 'message',
        role: 'assistant',
        model: message.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...message.usage, output_tokens: 1 },
        ...('diagnostics' in message ? { diagnostics: message.diagnostics } : {}),
      },
    }),
  ]
  message.content.forEach((block, index) => {
    if (block['type'] === 'tool_use') {
      frames.push(frame('content_block_start', { index, content_block: { ...block, input: {} } }))
      const json = JSON.stringify(block['input'])
      const middle = Math.floor(json.length / 2)
      frames.push(
        frame('content_block_delta', {
          index,
          delta: { type: 'input_json_delta', partial_json: json.slice(0, middle) },
        }),
      )
      frames.push(
        frame('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: json.slice(middle) } }),
      )
    } else {
      frames.push(frame('content_block_start', { index, content_block: { type: 'text', text: '' } }))
      frames.push(frame('ping', {}))
      for (const word of String(block['text']).match(/\S+\s*/g) ?? [])
        frames.push(frame('content_block_delta', { index, delta: { type: 'text_delta', text: word } }))
    }
    frames.push(frame('content_block_stop', { index }))
  })
  const { cache_creation: _breakdown, service_tier: _tier, ...deltaUsage } = message.usage
  frames.push(
    frame('message_delta', {
      delta: { stop_reason: message.stopReason, stop_sequence: null },
      usage: { ...deltaUsage, output_tokens: message.outputTokens },
    }),
  )
  frames.push(frame('message_stop', {}))
  return frames
}
