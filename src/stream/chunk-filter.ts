/** Rewrites what the client gets of an event stream, chunk by chunk; bytes it holds back come out of a later push or end. */
export interface ChunkFilter {
  push(chunk: Buffer): Buffer
  end(): Buffer
}
