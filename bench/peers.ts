/**
 * The things a benchmark compares against, started side by side on loopback: the fake upstream,
 * nginx (Debian's package, configured for SSE) and Portkey's gateway (npm, installed on first use
 * into a cache folder outside the repository). Each says plainly when it could not run.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'

export interface Target {
  readonly name: string
  readonly url: string
  /** Headers this target needs to reach the fake upstream (Portkey's routing headers). */
  readonly headers: Record<string, string>
  readonly streams: boolean
  readonly stop: () => Promise<void>
  /** The process whose CPU time is counted (with its children: nginx's worker). */
  readonly pid?: number
}

export interface Unavailable {
  readonly name: string
  readonly reason: string
}

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })
}

/** Waits for a ctxgate child to answer /healthz; kills it and throws after `seconds`. */
export async function untilHealthy(url: string, child: ChildProcess, seconds: number): Promise<void> {
  for (let attempt = 0; attempt < seconds * 10; attempt++) {
    const ready = await request(`${url}/healthz`).then(
      (response) => response.body.text().then(() => response.statusCode === 200),
      () => false,
    )
    if (ready) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  child.kill()
  throw new Error(`ctxgate did not start within ${seconds} s`)
}

async function waitForPort(port: number, timeoutMs = 15_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = createServer()
      socket.once('error', () => resolve(true))
      socket.listen(port, '127.0.0.1', () => socket.close(() => resolve(false)))
    })
    if (open) return true
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return false
}

const root = new URL('..', import.meta.url).pathname
let built = false
/** The compiled CLI, as `npm start` and the container run it (not tsx, which adds its own per-call helpers). */
function builtCli(): string {
  if (!built) {
    const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' })
    if (build.status !== 0) throw new Error('npm run build failed')
    built = true
  }
  return join(root, 'dist/cli.js')
}

/** The fake upstream in its own process, so its CPU does not count against the proxy under test. */
export async function startMockProcess(): Promise<Target> {
  const port = await freePort()
  const child = spawn(process.execPath, [builtCli(), 'mock', '--port', String(port)], { stdio: 'ignore' })
  if (!(await waitForPort(port))) throw new Error('the fake upstream did not start')
  return {
    name: 'direct',
    url: `http://127.0.0.1:${port}`,
    headers: {},
    streams: true,
    ...(child.pid ? { pid: child.pid } : {}),
    stop: () => stopChild(child),
  }
}

/** ctxgate in its own process (as nginx and Portkey are), rewriting on or off. */
export interface CtxgateOptions {
  /** Another build's dist/cli.js (a baseline checkout), shown with `label`. */
  readonly other?: { readonly cli: string; readonly label: string }
  /** A separate upstream for the OpenAI routes (the Anthropic routes use `upstream`). */
  readonly openaiUpstream?: string
  /** More YAML for the config file (after `rewrite:`), e.g. a budget to measure against. */
  readonly configYaml?: string
  /** More environment (OTEL_* for the OpenTelemetry bench, CTXGATE_REDIS_URL…), and the name it shows under. */
  readonly env?: Readonly<Record<string, string>>
  readonly label?: string
}

export async function startCtxgate(
  upstream: string,
  rewrite: boolean,
  options: CtxgateOptions = {},
): Promise<Target & { readonly pid: number }> {
  const { other } = options
  const port = await freePort()
  const configFile = join(tmpdir(), `ctxgate-bench-${port}.yaml`)
  writeFileSync(configFile, `rewrite:\n  enabled: ${rewrite}\n${options.configYaml ?? ''}`)
  // As shipped: the default log level (a line per request), written to /dev/null.
  const env = {
    ...process.env,
    CTXGATE_PORT: String(port),
    CTXGATE_ANTHROPIC_URL: upstream,
    CTXGATE_OPENAI_URL: options.openaiUpstream ?? upstream,
    CTXGATE_CONFIG: configFile,
    ...options.env,
  }
  const child = spawn(process.execPath, [other?.cli ?? builtCli()], { env, stdio: 'ignore' })
  if (!(await waitForPort(port))) throw new Error('ctxgate did not start')
  return {
    name: `ctxgate${other ? ` ${other.label}` : ''}${options.label ? ` ${options.label}` : ''} (rewrite ${rewrite ? 'on' : 'off'})`,
    url: `http://127.0.0.1:${port}`,
    headers: {},
    streams: true,
    pid: child.pid ?? 0,
    stop: () => stopChild(child),
  }
}

/** The Node.js floor (bench/node-floor-proxy.ts): node:http and undici with nothing in between. */
export async function startNodeFloor(upstream: string): Promise<Target & { readonly pid: number }> {
  const port = await freePort()
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(root, 'bench/node-floor-proxy.ts'), String(port), upstream],
    { stdio: 'ignore' },
  )
  if (!(await waitForPort(port))) throw new Error('the Node floor proxy did not start')
  return {
    name: 'Node floor (http + undici)',
    url: `http://127.0.0.1:${port}`,
    headers: {},
    streams: true,
    pid: child.pid ?? 0,
    stop: () => stopChild(child),
  }
}

/** nginx as a plain reverse proxy with buffering off, the floor any proxy is measured against. */
export async function startNginx(upstreamPort: number): Promise<Target | Unavailable> {
  const binary = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((path) => existsSync(path))
  if (!binary) return { name: 'nginx', reason: 'not installed (apt-get install nginx-light)' }
  const port = await freePort()
  const prefix = join(tmpdir(), `ctxgate-bench-nginx-${port}`)
  mkdirSync(join(prefix, 'logs'), { recursive: true })
  const conf = join(prefix, 'nginx.conf')
  writeFileSync(
    conf,
    `daemon off;\nworker_processes 1;\npid ${prefix}/nginx.pid;\nerror_log ${prefix}/logs/error.log warn;\nevents { worker_connections 4096; }\nhttp {\n  access_log off;\n  client_body_temp_path ${prefix}/body;\n  proxy_temp_path ${prefix}/proxy;\n  upstream mock { server 127.0.0.1:${upstreamPort}; keepalive 128; }\n  server {\n    listen 127.0.0.1:${port};\n    client_max_body_size 64m;\n    location / {\n      proxy_pass http://mock;\n      proxy_http_version 1.1;\n      proxy_set_header Connection "";\n      proxy_buffering off;\n      proxy_request_buffering off;\n      proxy_read_timeout 600s;\n    }\n  }\n}\n`,
  )
  const child = spawn(binary, ['-c', conf, '-p', prefix], { stdio: 'ignore' })
  if (!(await waitForPort(port))) {
    child.kill()
    return { name: 'nginx', reason: 'did not start' }
  }
  return {
    name: 'nginx',
    url: `http://127.0.0.1:${port}`,
    headers: {},
    streams: true,
    ...(child.pid ? { pid: child.pid } : {}),
    stop: () => stopChild(child),
  }
}

/** Portkey's gateway from npm at the version the peers were measured at; installed once into a cache folder. */
export async function startPortkey(upstream: string): Promise<Target | Unavailable> {
  const folder = join(tmpdir(), 'ctxgate-bench-portkey-1.15.2')
  const entry = join(folder, 'node_modules/@portkey-ai/gateway/build/start-server.js')
  if (!existsSync(entry)) {
    mkdirSync(folder, { recursive: true })
    writeFileSync(join(folder, 'package.json'), '{"name":"portkey-bench","private":true}')
    const install = spawnSync('npm', ['install', '--no-audit', '--no-fund', '@portkey-ai/gateway@1.15.2'], {
      cwd: folder,
      stdio: 'ignore',
      timeout: 300_000,
    })
    if (install.status !== 0 || !existsSync(entry))
      return { name: 'Portkey 1.15.2', reason: 'npm install @portkey-ai/gateway@1.15.2 failed' }
  }
  const port = await freePort()
  const child = spawn(process.execPath, [entry, `--port=${port}`, '--headless'], { cwd: folder, stdio: 'ignore' })
  if (!(await waitForPort(port))) {
    child.kill()
    return { name: 'Portkey 1.15.2', reason: 'did not start' }
  }
  // Portkey 1.15.2 fails streamed /v1/messages against a plain upstream (TypeError: immutable in updateHeaders): JSON rows only.
  return {
    name: 'Portkey 1.15.2',
    url: `http://127.0.0.1:${port}`,
    headers: { 'x-portkey-provider': 'anthropic', 'x-portkey-custom-host': `${upstream}/v1` },
    streams: false,
    ...(child.pid ? { pid: child.pid } : {}),
    stop: () => stopChild(child),
  }
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve()
    child.once('exit', () => resolve())
    child.kill('SIGTERM')
  })
}

/** CPU time (user + system, ms) of a process and its direct children, from /proc; undefined where /proc is missing. */
export function cpuTimeMs(pid: number): number | undefined {
  const ticksMs = 10
  const read = (id: string): { ppid: number; ms: number } | undefined => {
    try {
      const fields = readFileSync(`/proc/${id}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
      return { ppid: Number(fields[1]), ms: (Number(fields[11]) + Number(fields[12])) * ticksMs }
    } catch {
      return undefined
    }
  }
  const own = read(String(pid))
  if (!own) return undefined
  let total = own.ms
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const child = read(entry)
    if (child?.ppid === pid) total += child.ms
  }
  return total
}

export function isTarget(value: Target | Unavailable): value is Target {
  return 'url' in value
}

export function percentile(values: readonly number[], p: number): number {
  const sorted = values.toSorted((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN
}
