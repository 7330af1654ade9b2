import type { ErrorKind } from '../errors.ts'

/** How one provider family words an error ctxgate raises itself, so SDKs parse it like their own. */
export interface ErrorShape {
  /** A complete JSON error body. */
  body(kind: ErrorKind, message: string): string
  /** A complete SSE frame that makes the provider's SDK raise `message` mid-stream. */
  streamEvent(kind: ErrorKind, message: string): string
}
