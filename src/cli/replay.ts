import { mkdirSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { clientCaches, type ClientCache } from '../replay/build-requests.ts'
import { ReplayedLengths } from '../replay/learning-store.ts'
import { toJsonl, type Conversation } from '../replay/conversation.ts'
import {
  latestRecording,
  parseAgent,
  recordingById,
  type FoundRecording,
} from '../replay/importers/default-locations.ts'
import { loadRecordingFile, type RecordingFormat } from '../replay/importers/load-recording.ts'
import { renderHtml } from '../replay/report/html.ts'
import { buildReport, type ReplayReport } from '../replay/report/build-report.ts'
import { renderTextReport } from '../replay/report/text.ts'
import { renderHiddenTable } from '../replay/hidden/report.ts'
import { renderRefetchTable } from '../replay/report/refetch-table.ts'
import { renderMarkdownTable } from '../replay/report/table.ts'
import { cacheWriteReadings, type CacheWrites } from '../mock/prompt-cache.ts'
import {
  directLabel,
  replayConversation,
  type ReplayOptions,
  type RunResult,
  type Variant,
} from '../replay/run-replay.ts'

export const replayUsage = `Usage: ctxgate replay FILE... [options]
       ctxgate replay --latest AGENT | --session ID [--from AGENT] [options]

Replays recorded agent runs request by request, straight to a fake upstream and through ctxgate,
both with prompt-cache simulation, and reports what each cost. FILE is a Claude Code, Codex
(rollout .jsonl/.jsonl.zst or exec --json), opencode (export or opencode.db), Gemini CLI,
OpenHands, mini-swe-agent or ctxgate JSONL recording.

  --latest AGENT           the newest session in AGENT's own folder (claude-code, codex, opencode, gemini-cli)
  --session ID             that session, looked up in the agents' own folders
  --from AGENT             look only in AGENT's folder for --session

  --window TOKENS          context window of the fake upstream (default 200000)
  --model NAME             model name to send (default: each recording's own)
  --budget TOKENS          token budget ctxgate is asked to keep (x-ctxgate-budget)
  --client-cache MODE      none | rolling | tight | full: how the agent marks its own cache (default:
                           what the recording's client does: rolling for Claude Code and Codex, none
                           otherwise); tight also marks the tools' end, leaving ctxgate one slot;
                           full the newest two messages too, leaving none
  --cache-writes MODE      literal | strict: the fake upstream's reading of a marker inside what was read
  --stream                 send streaming requests
  --max-tokens N           max_tokens of each request (default 4096)
  --min-cacheable TOKENS   shortest cacheable prefix of the fake upstream (default 1024)
  --strategy FILE          a ctxgate config to compare; repeat to compare several (default: built-in)
  --uncompacted            undo recorded compactions (keep the history, drop the summary)
  --learn                  each run's ctxgate knows how long the runs before it lasted (as one that
                           served them would): forecasts learn; without it every run starts cold
  --prompt FILE            prompt file of a Claude Code stream-json or Codex exec --json log
  --verbose                also show examples of needed-but-hidden strings
  --json                   print the report as JSON
  --markdown               print the totals as a Markdown table
  --html FILE              also write a self-contained HTML report with charts
  --export DIR             convert the recordings to ctxgate JSONL in DIR and stop (- for stdout)
`

export const replayOptions = {
  latest: { type: 'string' },
  session: { type: 'string' },
  from: { type: 'string' },
  window: { type: 'string' },
  model: { type: 'string' },
  budget: { type: 'string' },
  'client-cache': { type: 'string' },
  'cache-writes': { type: 'string' },
  stream: { type: 'boolean' },
  'max-tokens': { type: 'string' },
  'min-cacheable': { type: 'string' },
  strategy: { type: 'string', multiple: true },
  uncompacted: { type: 'boolean' },
  prompt: { type: 'string' },
  verbose: { type: 'boolean' },
  learn: { type: 'boolean' },
  json: { type: 'boolean' },
  markdown: { type: 'boolean' },
  html: { type: 'string' },
  export: { type: 'string' },
} as const

export type { ReplayReport }

type Values = {
  [K in keyof typeof replayOptions]?: (typeof replayOptions)[K] extends { multiple: true }
    ? string[]
    : (typeof replayOptions)[K]['type'] extends 'boolean'
      ? boolean
      : string
}

export async function replay(
  values: Values,
  files: readonly string[],
  write: (text: string) => void = (text) => process.stdout.write(text),
  inform: (text: string) => void = (text) => process.stderr.write(text),
): Promise<ReplayReport | undefined> {
  const found: FoundRecording[] = [...files.map((path) => ({ path })), ...foundRecordings(values)]
  if (found.length === 0)
    throw new UsageError('replay needs at least one recording file (or --latest AGENT, or --session ID)')
  const recordings: { readonly format: RecordingFormat; readonly conversations: readonly Conversation[] }[] = []
  for (const recording of found)
    recordings.push(
      await loadRecordingFile(recording.path, {
        uncompacted: values.uncompacted === true,
        ...(values.prompt ? { promptFile: values.prompt } : {}),
        ...(recording.session ? { session: recording.session } : {}),
      }),
    )
  const conversations: Conversation[] = recordings.flatMap((recording) => recording.conversations)

  if (values.export !== undefined) {
    exportConversations(conversations, values.export, write)
    return undefined
  }
  const assumed = clientCacheOf(values['client-cache'], recordings)
  const options = { ...replayOptionsFrom(values), clientCache: assumed.clientCache }
  const results: RunResult[] = []
  for (const recording of recordings)
    for (const conversation of recording.conversations)
      results.push(
        await replayConversation(conversation, {
          ...options,
          clientCache: assumed.of(recording.format, conversation.source),
        }),
      )
  // Which cache marks the replay assumed the agent places: the headline depends on it.
  ;(values.json || values.markdown ? inform : write)(`${assumed.line}\n`)

  const report = buildReport(results, options)
  if (values.html) writeHtmlReport(values.html, results, report, inform)
  if (values.json) write(`${JSON.stringify(report, null, 2)}\n`)
  else if (values.markdown)
    write(
      `${renderMarkdownTable([...report.runs.flatMap((run) => run.rows), ...report.totals])}\n\n${renderHiddenTable(report.hidden, true)}\n\n${renderRefetchTable(report.refetches, true)}\n`,
    )
  else write(renderTextReport(report, values.verbose === true))
  return report
}

/** Writes the HTML page, creating its folder, and says where (on stderr, so --json stays clean). */
function writeHtmlReport(
  file: string,
  results: readonly RunResult[],
  report: ReplayReport,
  inform: (text: string) => void,
): void {
  const { window, clientCache } = report.options
  const html = renderHtml(
    results,
    report.totals,
    `ctxgate replay — window ${window.toLocaleString('en-US')}, client cache ${clientCache}`,
    window,
  )
  try {
    mkdirSync(dirname(resolve(file)), { recursive: true })
    writeFileSync(file, html)
  } catch (error) {
    throw new UsageError(`--html ${file}: cannot write (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
  }
  inform(`wrote ${resolve(file)}\n`)
}

export class UsageError extends Error {}

/**
 * Agents whose recordings replay with their own rolling cache marks by default: Claude Code marks the
 * newest messages of every request, and Codex's requests carry a prompt_cache_key so the provider
 * caches their prefix. Other agents (mini-swe-agent, OpenHands, plain message lists) mark nothing.
 * A ctxgate JSONL export is judged by the log it was made from (its `source`).
 */
export function clientOfRecording(format: RecordingFormat, source: string): 'Claude Code' | 'Codex' | undefined {
  if (format.startsWith('claude-')) return 'Claude Code'
  if (format.startsWith('codex')) return 'Codex'
  if (format !== 'ctxgate') return undefined
  if (/codex/i.test(source)) return 'Codex'
  if (/agent_log_raw|claude/i.test(source) && !source.endsWith('.traj.json')) return 'Claude Code'
  return undefined
}

/** The client cache each recording replays with, and the line that says which and why. */
function clientCacheOf(
  flag: string | undefined,
  recordings: readonly { readonly format: RecordingFormat; readonly conversations: readonly Conversation[] }[],
): { clientCache: ClientCache; of: (format: RecordingFormat, source: string) => ClientCache; line: string } {
  if (flag !== undefined) {
    if (!(clientCaches as readonly string[]).includes(flag))
      throw new UsageError(`--client-cache must be ${clientCaches.join(', ')}, got ${JSON.stringify(flag)}`)
    const chosen = flag as ClientCache
    return { clientCache: chosen, of: () => chosen, line: `client cache: ${flag} (--client-cache)` }
  }
  const of = (format: RecordingFormat, source: string): ClientCache =>
    clientOfRecording(format, source) === undefined ? 'none' : 'rolling'
  const counts = new Map<string, number>()
  for (const recording of recordings)
    for (const conversation of recording.conversations) {
      const client = clientOfRecording(recording.format, conversation.source)
      const key = client ? `rolling for ${client}` : `none for ${recording.format}`
      counts.set(key, (counts.get(key) ?? 0) + 1)
    }
  const parts = [...counts.entries()].map(([key, count]) => `${key} (${count} run${count === 1 ? '' : 's'})`)
  const all = [...counts.keys()]
  return {
    clientCache: all.every((key) => key.startsWith('rolling')) ? 'rolling' : 'none',
    of,
    line: `client cache: ${parts.join(', ')}: what each agent does; --client-cache none|rolling to change`,
  }
}

/** `--cache-writes literal|strict` (default literal), or a usage error naming the choices. */
export function cacheWritesFlag(raw: string | undefined): CacheWrites {
  if (raw === undefined) return 'literal'
  if ((cacheWriteReadings as readonly string[]).includes(raw)) return raw as CacheWrites
  throw new UsageError(`--cache-writes must be ${cacheWriteReadings.join(' or ')}, got ${JSON.stringify(raw)}`)
}

/** Recordings named by --latest or --session, found in the agents' default folders. */
function foundRecordings(values: Values): FoundRecording[] {
  const from = values.from === undefined ? undefined : parseAgent(values.from)
  if (from && values.session === undefined && values.latest === undefined)
    throw new UsageError('--from names where --session looks; give --session ID too')
  return [
    ...(values.latest === undefined ? [] : [latestRecording(parseAgent(values.latest))]),
    ...(values.session === undefined ? [] : [recordingById(values.session, from)]),
  ]
}

function replayOptionsFrom(values: Values): ReplayOptions {
  const clientCache = values['client-cache'] ?? 'none'
  const strategies = values.strategy ?? []
  const variants: Variant[] = [
    { label: directLabel, direct: true },
    ...(strategies.length === 0
      ? [{ label: 'ctxgate' }]
      : strategies.map((file) => ({ label: `ctxgate:${basename(file).replace(/\.ya?ml$/, '')}`, configFile: file }))),
  ]
  const budget = values.budget === undefined ? undefined : positive('--budget', values.budget)
  return {
    window: positive('--window', values.window ?? '200000'),
    minCacheableTokens: positive('--min-cacheable', values['min-cacheable'] ?? '1024'),
    maxTokens: positive('--max-tokens', values['max-tokens'] ?? '4096'),
    clientCache: clientCache as ClientCache,
    cacheWrites: cacheWritesFlag(values['cache-writes']),
    stream: values.stream === true,
    variants,
    ...(values.model ? { model: values.model } : {}),
    ...(budget === undefined ? {} : { budget }),
    ...(values.learn === true ? { learned: learnedByVariant(variants) } : {}),
  }
}

/** One record of replayed session lengths per ctxgate variant, kept across the runs (`--learn`). */
function learnedByVariant(variants: readonly Variant[]): ReadonlyMap<string, ReplayedLengths> {
  return new Map(variants.filter((variant) => !variant.direct).map((variant) => [variant.label, new ReplayedLengths()]))
}

function positive(flag: string, raw: string): number {
  const value = Number(raw)
  if (!Number.isInteger(value) || value <= 0)
    throw new UsageError(`${flag} must be a positive whole number, got ${JSON.stringify(raw)}`)
  return value
}

function exportConversations(
  conversations: readonly Conversation[],
  target: string,
  write: (text: string) => void,
): void {
  if (target === '-') {
    for (const conversation of conversations) write(toJsonl(conversation))
    return
  }
  mkdirSync(target, { recursive: true })
  const written = new Set<string>()
  for (const conversation of conversations) {
    let name = exportFileName(conversation.source, conversation.id)
    // Two conversations given the same name (one recording holding several): the later one gets its index as well.
    if (written.has(name)) name = name.replace(/\.ctxgate\.jsonl$/, `.${written.size + 1}.ctxgate.jsonl`)
    written.add(name)
    writeFileSync(join(target, name), toJsonl(conversation))
    write(`wrote ${join(target, name)}\n`)
  }
}

/**
 * An exported conversation's file name: its recording's name, then its id when that adds anything
 * (a recording holding several conversations); a Claude Code session file is already named by its id.
 */
export function exportFileName(source: string, id: string): string {
  const base = basename(source)
    .replace(/[#/]/g, '_')
    .replace(/\.(jsonl|json)$/, '')
  const ownId = id.replace(/[^\w.-]/g, '_').slice(0, 40)
  const named = id === source || ownId === base || ownId === basename(source)
  return `${named ? base : `${base}.${ownId}`}.ctxgate.jsonl`
}
