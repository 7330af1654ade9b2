/**
 * SSE tap throughput: parsing a copy of a stream at different chunk sizes, beside a baseline that
 * only touches each chunk. Usage: tsx bench/sse-tap.ts [megabytes]
 */
import { createSseTap } from '../src/stream/sse-tap.ts'

const megabytes = Number(process.argv[2] ?? 16)
const event = `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'The quick brown fox jumps over the lazy dog. ' } })}\n\n`
const stream = Buffer.from(event.repeat(Math.ceil((megabytes * 1024 * 1024) / event.length)))

function run(chunkSize: number, withTap: boolean): number {
  const tap = withTap ? createSseTap() : undefined
  let sink = 0
  // Byte-at-a-time runs take a slice, or they would take minutes.
  const length = chunkSize === 1 ? Math.min(stream.length, 2 * 1024 * 1024) : stream.length
  const started = performance.now()
  for (let offset = 0; offset < length; offset += chunkSize) {
    const chunk = stream.subarray(offset, offset + chunkSize)
    sink += chunk[0] ?? 0
    tap?.push(chunk)
  }
  tap?.end()
  const seconds = (performance.now() - started) / 1000
  if (sink < 0) console.log(sink)
  return length / 1024 / 1024 / seconds
}

console.log(`\nSSE tap throughput over ${(stream.length / 1024 / 1024).toFixed(1)} MB (MB/s)`)
console.log(['chunk size', 'baseline (no tap)', 'with tap'].join(' | '))
for (const size of [1, 16, 256, 4096, 65_536]) {
  run(size, true)
  console.log([`${size} B`, run(size, false).toFixed(0), run(size, true).toFixed(0)].join(' | '))
}
