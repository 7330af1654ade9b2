/**
 * When ctxgate asked an OpenAI Chat stream for usage the client did not ask for, the client must
 * get the stream it would have got: the extra usage-only chunk (`"choices":[]`) is dropped and the
 * `"usage":null` ctxgate caused on every other chunk is taken out (model-apis §7.3). Frames pass
 * whole and in order; only a frame split across reads waits for its end.
 */
export interface ChunkFilter {
  push(chunk: Buffer): Buffer
  end(): Buffer
}

const usageNull = ',"usage":null'

export function createUsageChunkFilter(): ChunkFilter {
  let pending = ''
  // A multibyte character split across reads must not be decoded in halves.
  const decoder = new TextDecoder('utf-8')
  const filterFrames = (text: string): string => {
    let out = ''
    let start = 0
    for (;;) {
      const end = text.indexOf('\n\n', start)
      if (end === -1) break
      out += filterFrame(text.slice(start, end + 2))
      start = end + 2
    }
    pending = text.slice(start)
    return out
  }
  return {
    push(chunk) {
      return Buffer.from(filterFrames(pending + decoder.decode(chunk, { stream: true })))
    },
    end() {
      const rest = pending + decoder.decode()
      pending = ''
      return Buffer.from(rest)
    },
  }
}

function filterFrame(frame: string): string {
  if (!frame.startsWith('data: {')) return frame
  if (frame.includes('"choices":[]') && frame.includes('"usage":{')) return ''
  return frame.includes(usageNull) ? frame.replace(usageNull, '') : frame
}
