#!/usr/bin/env node
import { parseArgs } from 'node:util'
import { ConfigError } from './errors.ts'
import { serve } from './cli/serve.ts'
import { mock } from './cli/mock.ts'
import { demo } from './cli/demo.ts'

const usage = `Usage: ctxgate [serve] [options]      start the proxy (default)
       ctxgate mock [options]         start the fake upstream (tests, demos)
       ctxgate demo                   run a few calls through ctxgate to the fake upstream

Proxy options (each also an environment variable, see README):
  --config FILE          extra YAML config (CTXGATE_CONFIG)
  --host HOST            listen address (CTXGATE_HOST, default 127.0.0.1)
  --port PORT            listen port (CTXGATE_PORT, default 8787)
  --anthropic-url URL    Anthropic upstream (CTXGATE_ANTHROPIC_URL)
  --openai-url URL       OpenAI upstream (CTXGATE_OPENAI_URL)
  --log-level LEVEL      pino level (CTXGATE_LOG_LEVEL)
  --metrics-port PORT    serve /metrics on its own port (CTXGATE_METRICS_PORT)

Mock options:
  --host HOST --port PORT (default 8788)  --window TOKENS  --min-cacheable TOKENS
`

const commands: Record<string, (flags: Record<string, string | undefined>) => Promise<void>> = {
  serve: (flags) => serve(flags, process.env),
  mock,
  demo: () => demo(),
}

const stringOption = { type: 'string' } as const
const options = {
  help: { type: 'boolean', short: 'h' },
  config: stringOption,
  host: stringOption,
  port: stringOption,
  'anthropic-url': stringOption,
  'openai-url': stringOption,
  'log-level': stringOption,
  'metrics-port': stringOption,
  window: stringOption,
  'min-cacheable': stringOption,
} as const

async function main(argv: string[]): Promise<void> {
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: typeof options; allowPositionals: true }>>
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true })
  } catch (error) {
    process.stderr.write(`ctxgate: ${(error as Error).message}\n\n${usage}`)
    process.exitCode = 2
    return
  }
  const { values, positionals } = parsed
  if (values.help === true) {
    process.stdout.write(usage)
    return
  }
  const name = positionals[0] ?? 'serve'
  const command = commands[name]
  if (!command) {
    process.stderr.write(`ctxgate: unknown command "${name}"\n\n${usage}`)
    process.exitCode = 2
    return
  }
  const flags: Record<string, string | undefined> = {}
  for (const [key, value] of Object.entries(values)) if (typeof value === 'string') flags[key] = value
  await command(flags)
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`ctxgate: ${error.message}\n`)
    process.exit(2)
  }
  process.stderr.write(`ctxgate: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exit(1)
})
