import type { LiveSnapshot } from './live-history.ts'

/**
 * The snapshot frame every opening stream starts with. Opens that arrive while one is being read
 * share it (one Redis read, one buffer), so many pages at once cost one snapshot, not one each.
 */
export function sharedSnapshotFrame(read: () => Promise<LiveSnapshot>): () => Promise<Buffer> {
  let inFlight: Promise<Buffer> | undefined
  return () => {
    inFlight ??= read()
      .then((snapshot) => Buffer.from(`retry: 2000\nevent: snapshot\ndata: ${JSON.stringify(snapshot)}\n\n`))
      .finally(() => {
        inFlight = undefined
      })
    return inFlight
  }
}
