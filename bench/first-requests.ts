/**
 * The rewrite hook's time before dispatch over the first requests of a fresh process, as a sidecar
 * serves them: one request at a time with a 1 ms pause between (a proxy idles between calls), each
 * build in a process of its own, the reference vocabulary loaded as ctxgate loads it. V8 compiles a
 * function to optimized code only after many calls, so these requests run slower than a long-lived
 * process's (bench/hook-cpu.ts measures that steady state). Two 2 KB bodies: the latency bench's,
 * the same each time, and one of new words each time, as a real client's first turn or side call is.
 * Wall time from the hook's call until it answers (for a request sent before planning, its records
 * come after, untimed, as forward.ts makes them once the bytes are on their way); the first request,
 * which waits for the vocabulary to load, is not timed. Runs alternate between the builds.
 * Usage: tsx bench/first-requests.ts [requests=600] [baseline-dist-folder] [runs=2]
 *   (the folder is another checkout's built dist/, next to its config/; this build's dist/ must be built)
 */
import { spawn } from 'node:child_process'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { hookFromBuild } from './hook-from-build.ts'
import { freshSmallRequest, smallRequest } from './latency-bodies.ts'
import { percentile } from './peers.ts'

const bodies = {
  same: () => JSON.stringify(smallRequest),
  'new text': (request: number) => JSON.stringify(freshSmallRequest(request)),
} as const
type BodyKind = keyof typeof bodies

const [, , first, ...rest] = process.argv
if (first === '--child') await child(rest[0] ?? '', rest[1] as BodyKind, Number(rest[2]))
else await parent(Number(first ?? 600), rest[0], Number(rest[1] ?? 2))

/** One build in this process: the hook as the app makes it, timed request by request. */
async function child(dist: string, kind: BodyKind, requests: number): Promise<void> {
  const hook = await hookFromBuild(dist, 'js', { reference: true })
  const headers = { 'user-agent': 'bench', 'anthropic-version': '2023-06-01' }
  const times: number[] = []
  for (let request = 0; request <= requests; request++) {
    const body = Buffer.from(bodies[kind](request))
    const started = performance.now()
    const result = await hook(body, headers, { recordsAfterDispatch: true })
    if (request > 0) times.push(performance.now() - started)
    await result.prepared?.afterDispatch?.()
    await new Promise((done) => setTimeout(done, 1))
  }
  process.stdout.write(JSON.stringify(times))
}

function timesOf(dist: string, kind: BodyKind, requests: number): Promise<number[]> {
  const script = fileURLToPath(import.meta.url)
  return new Promise((done, fail) => {
    const run = spawn(process.execPath, ['--import', 'tsx', script, '--child', dist, kind, String(requests)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let out = ''
    run.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    run.on('exit', (code) => (code === 0 ? done(JSON.parse(out) as number[]) : fail(new Error(`child exited ${code}`))))
  })
}

async function parent(requests: number, baselineDist: string | undefined, runs: number): Promise<void> {
  const builds: [string, string][] = [['this build', fileURLToPath(new URL('../dist', import.meta.url))]]
  if (baselineDist) builds.push(['baseline', resolve(baselineDist)])
  const window = 200
  const windows = Array.from({ length: Math.ceil(requests / window) }, (_, index) => index * window)
  const label = (start: number) => `${start + 1}–${Math.min(requests, start + window)}`
  console.log(`\n## Before dispatch, p50 in ms per ${window} requests of a fresh process (1 ms between requests)\n`)
  console.log(`| body | build | run | ${windows.map(label).join(' | ')} |`)
  console.log(`|---|---|---:|${windows.map(() => '---:').join('|')}|`)
  for (const kind of Object.keys(bodies) as BodyKind[])
    for (let run = 1; run <= runs; run++)
      for (const [name, dist] of run % 2 === 1 ? builds : builds.toReversed()) {
        const times = await timesOf(dist, kind, requests)
        const p50s = windows.map((start) => percentile(times.slice(start, start + window), 50).toFixed(3))
        console.log(`| ${kind} | ${name} | ${run} | ${p50s.join(' | ')} |`)
      }
}
