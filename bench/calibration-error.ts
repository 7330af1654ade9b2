/**
 * How close the calibrated estimate is to what the upstream counts, request by request, on every
 * recorded run under a folder: each request goes through ctxgate's rewrite hook to the fake upstream,
 * whose count comes back to the calibration exactly as on a live answer. Compares per-conversation
 * calibration (what ctxgate does) with one factor per model (what it did before), and checks the
 * targets: after a conversation's first answer never under by more than 2%, p99 over at most 15%.
 * Lists every request under by more than 2% (recording, run, request), so a miss can be looked into.
 * The upstream's count ("truth") is the fake upstream's own counter (`mock`: a word-piece counter
 * unrelated to the estimator), or the count of a real BPE vocabulary over the same body (`o200k`,
 * `cl100k`; bench/token-truth.ts), fed back to the calibration in place of the mock's.
 * Usage: tsx bench/calibration-error.ts [--truth mock,o200k,cl100k] FOLDER... (each folder reported on
 * its own; its `raw/` folders and any folder also named on the command line are left out of it)
 */
import { existsSync, readdirSync, statSync } from 'node:fs'
import { basename, join, resolve, sep } from 'node:path'
import { parseArgs } from 'node:util'
import { request } from 'undici'
import { loadConfig } from '../src/config/load-config.ts'
import { createLogger } from '../src/log/logger.ts'
import { startMockServer } from '../src/mock/server.ts'
import { createAnthropicUsageReader } from '../src/providers/anthropic/usage.ts'
import { promptTokensOf, zeroUsage } from '../src/model-call/usage.ts'
import { buildAnthropicRequests } from '../src/replay/build-requests.ts'
import { loadRecording } from '../src/replay/importers/load-recording.ts'
import { Calibration } from '../src/calibration/calibration.ts'
import { TokenEstimator } from '../src/rewrite/estimate.ts'
import { createRewriteHook } from '../src/forward/rewrite-hook/hook.ts'
import { MemorySessionStore } from '../src/session/memory-store.ts'
import { howToGetTraces } from './public-traces.ts'
import { truthCounter, type TruthName } from './token-truth.ts'
import type { ExactCounters } from '../src/rewrite/estimate.ts'
import { exactCounter, loadExactCounter, referenceEncoding } from '../src/providers/openai/tokenizer/exact-counters.ts'

const { values, positionals: folders } = parseArgs({
  options: {
    truth: { type: 'string', default: 'mock,o200k,cl100k' },
    worst: { type: 'string', default: '0' },
    'ctxgate-only': { type: 'boolean', default: false },
    reference: { type: 'string', default: referenceEncoding.replace('_base', '') },
  },
  allowPositionals: true,
})
const truths = values.truth.split(',').filter((name): name is Truth => ['mock', 'o200k', 'cl100k'].includes(name))
type Truth = 'mock' | TruthName
/** The vocabulary new content is sized by (`none`: the prior alone, as before it), loaded before the first request. */
const referenceName = values.reference
if (!['o200k', 'cl100k', 'none'].includes(referenceName)) {
  process.stderr.write('--reference is o200k, cl100k or none\n')
  process.exit(2)
}
const referenceCounter =
  referenceName === 'none'
    ? undefined
    : await loadExactCounter(`${referenceName as TruthName}_base`).then(() =>
        exactCounter(`${referenceName as TruthName}_base`),
      )
/** Replays count Claude requests: no exact counter, only the reference vocabulary. */
const counters: ExactCounters = {
  counterFor: () => undefined,
  ready: () => Promise.resolve(),
  reference: () => referenceCounter,
}
if (folders.length === 0 || folders.some((folder) => !existsSync(folder) || !statSync(folder).isDirectory())) {
  process.stderr.write(howToGetTraces())
  process.exit(2)
}

/** Recordings under a folder: not its `raw/` sources (attachments, prompts), not a folder measured on its own. */
function recordingsIn(folder: string): string[] {
  const here = resolve(folder)
  const others = folders.map((other) => resolve(other)).filter((other) => other.startsWith(here + sep))
  return readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .filter((name) => /\.(jsonl|json)$/.test(name) && !name.split(sep).includes('raw'))
    .map((name) => join(folder, name))
    .filter((file) => !others.some((other) => resolve(file).startsWith(other + sep)))
    .toSorted()
}

/** One factor per model: the conversation is never passed on, so only the model-wide ratios count. */
class ModelWideCalibration extends Calibration {
  override factor(model: string): number {
    return super.factor(model)
  }
  override record(model: string, estimated: number, actual: number, scope?: string): Promise<void> {
    return super.record(model, estimated, actual, scope)
  }
}

interface Sample {
  /** Calibrated estimate ÷ the upstream's count, minus 1. */
  readonly error: number
  /** The conversation had an answer before this request. */
  readonly afterFirstAnswer: boolean
  /** Recording, run and request, for the list of misses. */
  readonly where: string
  readonly estimate: number
  readonly actual: number
}

async function measure(files: readonly string[], calibration: Calibration, truth: Truth): Promise<Sample[]> {
  const count = truth === 'mock' ? undefined : truthCounter(truth)
  const mock = await startMockServer({ window: 200_000, logLimit: 1 })
  const config = loadConfig({
    overrides: { log: { level: 'silent' }, upstreams: { anthropic: { url: mock.url }, openai: { url: mock.url } } },
  })
  const hook = createRewriteHook({
    config,
    store: new MemorySessionStore(config.sessions),
    calibration,
    estimator: new TokenEstimator(counters),
    logger: createLogger('silent'),
  })('anthropic-messages')
  if (!hook) throw new Error('no hook for Messages')
  const samples: Sample[] = []
  try {
    for (const file of files)
      for (const [run, conversation] of loadRecording(file, { uncompacted: false }).conversations.entries()) {
        const requests = buildAnthropicRequests(conversation, { maxTokens: 4096, clientCache: 'none', stream: false })
        let answered = false
        for (const replayed of requests) {
          const result = await hook(Buffer.from(JSON.stringify(replayed.body)), {})
          if (result.kind !== 'forward') continue
          const prepared = result.prepared
          const answer = await request(`${mock.url}/v1/messages`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': 'bench' },
            body: prepared.body,
          })
          const text = await answer.body.text()
          const reported =
            answer.statusCode === 200 ? createAnthropicUsageReader().fromJson(JSON.parse(text)) : undefined
          const estimate = (prepared.log?.['rewrite'] as { estimatedAfter?: number } | undefined)?.estimatedAfter
          if (!reported || estimate === undefined) continue
          const usage = count
            ? {
                ...zeroUsage,
                inputTokens: count(JSON.parse(prepared.body.toString('utf8')) as Record<string, unknown>),
              }
            : reported
          const actual = promptTokensOf(usage)
          samples.push({
            error: estimate / actual - 1,
            afterFirstAnswer: answered,
            where: `${basename(file)} run ${run + 1} request ${replayed.index}`,
            estimate,
            actual,
          })
          await prepared.followUp?.recordUsage(usage)
          answered = true
        }
      }
  } finally {
    await mock.close()
  }
  return samples
}

const quantile = (sorted: readonly number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0
const percent = (value: number): string => `${(value * 100).toFixed(1)}%`

const calibrations = (): ReadonlyArray<readonly [string, Calibration]> => [
  ['per conversation (ctxgate)', new Calibration()],
  ...(values['ctxgate-only'] ? [] : [['one factor per model', new ModelWideCalibration()] as const]),
]
const worst = Math.max(0, Math.floor(Number(values.worst)) || 0)

for (const truth of truths)
  for (const folder of folders) {
    const files = recordingsIn(folder)
    const rows: string[] = []
    const misses: string[] = []
    for (const [label, calibration] of calibrations()) {
      const samples = (await measure(files, calibration, truth)).filter((sample) => sample.afterFirstAnswer)
      const errors = samples.map((sample) => sample.error).toSorted((a, b) => a - b)
      const under = errors.filter((error) => error < -0.02)
      for (const sample of samples.filter((each) => each.error < -0.02))
        misses.push(
          `- ${label}: ${sample.where}: estimated ${sample.estimate.toFixed(0)}, counted ${sample.actual} (${percent(sample.error)})`,
        )
      for (const sample of samples.toSorted((a, b) => b.error - a.error).slice(0, worst))
        misses.push(
          `- ${label}: over: ${sample.where}: estimated ${sample.estimate.toFixed(0)}, counted ${sample.actual} (${percent(sample.error)})`,
        )
      const p99 = quantile(errors, 0.99)
      const cells = [0.01, 0.5, 0.9, 0.99].map((q) => percent(quantile(errors, q)))
      rows.push(
        `| ${label} | ${errors.length} | ${cells.join(' | ')} | ${percent(errors[errors.length - 1] ?? 0)} | ${under.length} | ${percent(errors[0] ?? 0)} | ${under.length === 0 && p99 <= 0.15 ? 'met' : '**not met**'} |`,
      )
    }
    console.log(
      `${folder}, counted by ${truth === 'mock' ? 'the fake upstream' : truth}, new content sized by ${referenceName === 'none' ? 'the prior alone' : `the prior and ${referenceName}`}: calibrated estimate ÷ that count − 1, requests after each conversation's first answer (${files.length} recordings):\n\n| calibration | requests | p1 | p50 | p90 | p99 | max | under by > 2% | worst | targets |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n${rows.join('\n')}${misses.length > 0 ? `\n\nUnder by more than 2% (and the largest over, with --worst):\n${misses.join('\n')}` : ''}\n`,
    )
  }
