#!/usr/bin/env node
import { readFileSync } from 'node:fs'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { ConfigError } from './errors.ts'
import { demo } from './cli/demo.ts'
import { mock } from './cli/mock.ts'
import { replay, replayOptions, replayUsage, UsageError } from './cli/replay.ts'
import { StartupError } from './cli/listen.ts'
import { serve } from './cli/serve.ts'
import { explainParseError } from './cli/suggest-option.ts'
import { ImportError } from './replay/importers/import-error.ts'
import { settings, upstreamNames } from './config/sources.ts'
import type { UpstreamId } from './providers/upstream-ids.ts'

/** `--<id>-url` for each upstream of the registry's list, as the config's sources name them. */
const upstreamUrlFlags = settings.flatMap((setting) =>
  setting.path[0] === 'upstreams' && setting.flag ? [{ setting, id: setting.path[1] as UpstreamId }] : [],
)
const upstreamUrlHelp = upstreamUrlFlags
  .map(({ setting, id }) => `  ${`--${setting.flag} URL`.padEnd(23)}${upstreamNames[id]} upstream (${setting.env})`)
  .join('\n')

const usage = `Usage: ctxgate [serve] [options]      start the proxy (default)
       ctxgate --version              print the version
       ctxgate mock [options]         start the fake upstream (tests, demos)
       ctxgate replay FILE... [opts]  measure recorded agent runs with and without ctxgate
       ctxgate demo                   replay a bundled synthetic agent run and compare

Proxy options (each also an environment variable, see README):
  --config FILE          extra YAML config (CTXGATE_CONFIG)
  --host HOST            listen address (CTXGATE_HOST, default 127.0.0.1)
  --port PORT            listen port (CTXGATE_PORT, default 8787)
${upstreamUrlHelp}
  --log-level LEVEL      pino level (CTXGATE_LOG_LEVEL)
  --metrics-port PORT    serve /metrics on its own port (CTXGATE_METRICS_PORT)
  --metrics-host HOST    address of that port (CTXGATE_METRICS_HOST, default 127.0.0.1)
  --redis-url URL        share sessions across replicas (CTXGATE_REDIS_URL)

Mock options:
  --host HOST --port PORT (default 8788)  --window TOKENS  --min-cacheable TOKENS
  --agent-steps N        answer requests that offer a shell tool with N tool calls, then a final answer
  --agent-reread-every N with --agent-steps: every N-th call reads again a file read many steps before
  --cache-writes MODE    literal | strict: does a cache marker inside the prefix just read write an entry
                         (literal, default: yes; strict: no) — see docs/economy.md

${replayUsage}`

const text = { type: 'string' } as const
const help = { help: { type: 'boolean', short: 'h' } } as const
const serveOptions = {
  ...help,
  config: text,
  host: text,
  port: text,
  ...Object.fromEntries(upstreamUrlFlags.map(({ setting }) => [setting.flag, text])),
  'log-level': text,
  'metrics-port': text,
  'metrics-host': text,
  'redis-url': text,
} as const
const mockOptions = {
  ...help,
  host: text,
  port: text,
  window: text,
  'min-cacheable': text,
  'agent-steps': text,
  'agent-reread-every': text,
  'cache-writes': text,
} as const

interface Command {
  readonly options: ParseArgsConfig['options']
  readonly run: (values: Record<string, unknown>, positionals: string[]) => Promise<unknown>
}

const commands: Record<string, Command> = {
  serve: { options: serveOptions, run: (values) => serve(stringsOf(values), process.env) },
  mock: { options: mockOptions, run: (values) => mock(stringsOf(values)) },
  replay: { options: { ...help, ...replayOptions }, run: (values, positionals) => replay(values, positionals) },
  demo: { options: { ...help }, run: () => demo() },
}

/** The version in package.json, one folder up from src/cli.ts and from dist/cli.js alike. */
function version(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string }
  return manifest.version ?? 'unknown'
}

async function main(argv: string[]): Promise<void> {
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
    process.stdout.write(`ctxgate ${version()}\n`)
    return
  }
  const named = argv[0] !== undefined && !argv[0].startsWith('-') ? argv[0] : undefined
  const command = commands[named ?? 'serve']
  if (!command) {
    process.stderr.write(`ctxgate: unknown command "${named}"\n\n${usage}`)
    process.exitCode = 2
    return
  }
  let parsed: { values: Record<string, unknown>; positionals: string[] }
  try {
    parsed = parseArgs({
      args: named ? argv.slice(1) : argv,
      options: command.options ?? {},
      allowPositionals: true,
    }) as typeof parsed
  } catch (error) {
    const known = Object.keys(command.options ?? {})
    process.stderr.write(`ctxgate: ${explainParseError(error, known)}\n(ctxgate --help lists every option)\n`)
    process.exitCode = 2
    return
  }
  if (parsed.values['help'] === true) {
    process.stdout.write(usage)
    return
  }
  await command.run(parsed.values, parsed.positionals)
}

function stringsOf(values: Record<string, unknown>): Record<string, string | undefined> {
  const flags: Record<string, string | undefined> = {}
  for (const [key, value] of Object.entries(values)) if (typeof value === 'string') flags[key] = value
  return flags
}

// `ctxgate replay --export - | head` closes the pipe early: the reader is done, which is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0)
  throw error
})

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof UsageError || error instanceof ImportError) {
    process.stderr.write(`ctxgate: ${error.message}\n`)
    process.exit(2)
  }
  if (error instanceof StartupError) {
    process.stderr.write(`ctxgate: ${error.message}\n`)
    process.exit(1)
  }
  process.stderr.write(`ctxgate: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exit(1)
})
