/**
 * A CPU profile of one proxy process under sequential 2 KB model calls: ctxgate with rewriting off
 * (the route alone: fast path, forwarding, relay, log line, metrics) or on, JSON or streamed, against
 * the same fake upstream. Writes the .cpuprofile (node --cpu-prof) and prints the top self-time
 * functions and the wall time per request.
 * Usage: tsx bench/route-profile.ts [requests=5000] [rewrite=off|on] [json|stream] [out-dir] [cli.js]
 */
import { spawn } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { Agent, request } from 'undici'
import { smallRequest } from './latency-bodies.ts'
import { freePort, startMockProcess, untilHealthy } from './peers.ts'

const requests = Number(process.argv[2] ?? 5_000)
const mode = process.argv[3] ?? 'off'
const rewrite = mode === 'on'
/** `floor`: the bare Node proxy (bench/node-floor-proxy.ts) profiled the same way, for comparison. */
const floor = mode === 'floor'
const stream = process.argv[4] === 'stream'
const outDir = resolve(process.argv[5] ?? `route-profile-${Date.now()}`)
const cli = process.argv[6]
mkdirSync(outDir, { recursive: true })

const mock = await startMockProcess()
// As bench/peers.ts startCtxgate runs it (the default log level, to /dev/null), with the profiler on.
const port = await freePort()
const configFile = join(tmpdir(), `ctxgate-profile-${port}.yaml`)
writeFileSync(configFile, `rewrite:\n  enabled: ${rewrite}\n`)
const profiling = ['--cpu-prof', `--cpu-prof-dir=${outDir}`, '--cpu-prof-interval=100']
const child = spawn(
  process.execPath,
  floor
    ? // The floor has no SIGTERM handler of its own: exit cleanly so the profile is written.
      [
        ...profiling,
        '--import',
        'data:text/javascript,process.on("SIGTERM",()=>process.exit(0))',
        '--import',
        'tsx',
        join(import.meta.dirname, 'node-floor-proxy.ts'),
        String(port),
        mock.url,
      ]
    : [...profiling, cli ?? join(import.meta.dirname, '../dist/cli.js')],
  {
    env: {
      ...process.env,
      CTXGATE_PORT: String(port),
      CTXGATE_ANTHROPIC_URL: mock.url,
      CTXGATE_OPENAI_URL: mock.url,
      CTXGATE_CONFIG: configFile,
    },
    stdio: 'ignore',
  },
)
const proxy = {
  url: `http://127.0.0.1:${port}`,
  stop: () =>
    new Promise<void>((done) => {
      child.once('exit', () => done())
      child.kill('SIGTERM')
    }),
}
if (floor) await untilAnswering(proxy.url)
else await untilHealthy(proxy.url, child, 15)

async function untilAnswering(url: string): Promise<void> {
  for (let attempt = 0; attempt < 150; attempt++) {
    const up = await request(url, { method: 'POST', body: '{}' }).then(
      (answer) => answer.body.dump().then(() => true),
      () => false,
    )
    if (up) return
    await new Promise((done) => setTimeout(done, 100))
  }
  throw new Error('the floor did not start')
}
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 4 })
const body = JSON.stringify(stream ? { ...smallRequest, stream: true } : smallRequest)

async function send(): Promise<void> {
  const answer = await request(`${proxy.url}/v1/messages`, {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': 'bench' },
    body,
  })
  await answer.body.dump({ limit: Number.POSITIVE_INFINITY })
  if (answer.statusCode !== 200) throw new Error(`status ${answer.statusCode}`)
}

for (let warm = 0; warm < 200; warm++) await send()
// The profile's timestamps are CLOCK_MONOTONIC in µs, as hrtime is here: only the measured window is counted.
const windowStart = Number(process.hrtime.bigint() / 1000n)
const started = performance.now()
for (let sent = 0; sent < requests; sent++) await send()
const perRequest = (performance.now() - started) / requests
const windowEnd = Number(process.hrtime.bigint() / 1000n)
await agent.close()
await proxy.stop()
await mock.stop()

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly children?: readonly number[]
}
interface Profile {
  readonly nodes: readonly ProfileNode[]
  readonly samples: readonly number[]
  readonly timeDeltas: readonly number[]
  readonly startTime: number
}
const file = readdirSync(outDir).find((name) => name.endsWith('.cpuprofile'))
if (!file) throw new Error('no profile written')
const profile = JSON.parse(readFileSync(join(outDir, file), 'utf8')) as Profile
const byId = new Map(profile.nodes.map((node) => [node.id, node]))
const parentOf = new Map<number, number>()
for (const node of profile.nodes) for (const below of node.children ?? []) parentOf.set(below, node.id)
const self = new Map<string, number>()
const byFile = new Map<string, number>()
const inclusive = new Map<string, number>()
let idle = 0
let counted = 0
let at = profile.startTime
for (const [index, sample] of profile.samples.entries()) {
  at += profile.timeDeltas[index] ?? 0
  if (at < windowStart || at > windowEnd) continue
  counted++
  const node = byId.get(sample)
  if (!node) continue
  const { functionName, url, lineNumber } = node.callFrame
  if (functionName === '(idle)') {
    idle++
    continue
  }
  const where = url.replace(/^.*\/(node_modules\/[^/]+|dist|src)\//, '$1/')
  const key = `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`
  self.set(key, (self.get(key) ?? 0) + 1)
  const fileKey = where.startsWith('node_modules/') ? where.split('/').slice(0, 2).join('/') : where || functionName
  byFile.set(fileKey, (byFile.get(fileKey) ?? 0) + 1)
  // Inclusive: each function once per sample, however deep it recurs.
  const seen = new Set<string>()
  for (let id: number | undefined = node.id; id !== undefined; id = parentOf.get(id)) {
    const frame = byId.get(id)?.callFrame
    if (!frame || !frame.url.includes('/dist/')) continue
    const name = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\/dist\//, 'dist/')}`
    if (seen.has(name)) continue
    seen.add(name)
    inclusive.set(name, (inclusive.get(name) ?? 0) + 1)
  }
}
const busy = counted - idle
const share = (count: number): string => `${((100 * count) / busy).toFixed(1).padStart(5)} %`
console.log(
  `${requests} requests, ${perRequest.toFixed(3)} ms each (wall); ${busy} busy samples of ${counted} in the window`,
)
console.log(`busy CPU per request: ${((busy * 0.1) / requests).toFixed(3)} ms (100 µs samples)`)
console.log(`profile: ${join(outDir, file)}`)
console.log('\n## self time, top 40')
for (const [key, count] of [...self].toSorted((a, b) => b[1] - a[1]).slice(0, 40))
  console.log(`${share(count)}  ${key}`)
console.log('\n## self time by file, top 25')
for (const [key, count] of [...byFile].toSorted((a, b) => b[1] - a[1]).slice(0, 25))
  console.log(`${share(count)}  ${key}`)
console.log("\n## inclusive time of ctxgate's own functions, top 40")
for (const [key, count] of [...inclusive].toSorted((a, b) => b[1] - a[1]).slice(0, 40))
  console.log(`${share(count)}  ${key}`)
