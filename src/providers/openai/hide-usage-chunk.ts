import type { ChunkFilter } from '../../stream/chunk-filter.ts'
import { createSseFramer } from '../../stream/sse-frames.ts'

/**
 * When ctxgate asked an OpenAI Chat stream for usage the client did not ask for, the client must
 * get the stream it would have got: the extra usage-only chunk (`"choices":[]`) is dropped and the
 * `"usage":null` ctxgate caused on every other chunk is taken out. Frames pass whole and in order,
 * byte for byte unless changed; only a frame split across reads waits for its end.
 */
export function createUsageChunkFilter(): ChunkFilter {
  const framer = createSseFramer()
  return {
    push: (chunk) => Buffer.concat(framer.push(chunk).map(filterFrame)),
    end: () => framer.end(),
  }
}

// Inside a JSON string these would be escaped (\"usage\"), so a match is always the chunk's own field.
const usageNull = Buffer.from(',"usage":null')
const emptyChoices = Buffer.from('"choices":[]')
const usageObject = Buffer.from('"usage":{')

function filterFrame(frame: Buffer): Buffer {
  if (!carriesJsonData(frame)) return frame
  if (frame.includes(emptyChoices) && frame.includes(usageObject)) return Buffer.alloc(0)
  const at = frame.indexOf(usageNull)
  return at === -1 ? frame : Buffer.concat([frame.subarray(0, at), frame.subarray(at + usageNull.length)])
}

const dataField = /^data: ?\{/m

/** A frame whose data field holds a JSON object (`data: {` or `data:{`), not `[DONE]` or a comment. */
function carriesJsonData(frame: Buffer): boolean {
  return dataField.test(frame.toString('latin1'))
}
