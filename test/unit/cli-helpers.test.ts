import { afterEach, describe, expect, it, vi } from 'vitest'
import { parseArgs } from 'node:util'
import { describeListenFailure } from '../../src/cli/listen.ts'
import { exportFileName } from '../../src/cli/replay.ts'
import { stopWhenParentExits } from '../../src/cli/parent-watch.ts'
import { editDistance, explainParseError, nearestOption } from '../../src/cli/suggest-option.ts'

const serveFlags = [
  'help',
  'config',
  'host',
  'port',
  'anthropic-url',
  'openai-url',
  'log-level',
  'metrics-port',
  'redis-url',
]

describe('unknown options', () => {
  it('suggests the nearest real option for a typo, and nothing for an unrelated word', () => {
    expect(nearestOption('metric-port', serveFlags)).toBe('metrics-port')
    expect(nearestOption('prot', serveFlags)).toBe('port')
    expect(nearestOption('openai-ulr', serveFlags)).toBe('openai-url')
    expect(nearestOption('anthropic', serveFlags)).toBe('anthropic-url')
    expect(nearestOption('verbose', serveFlags)).toBeUndefined()
  })

  it('counts edits, with a swap of neighbours as one', () => {
    expect(editDistance('port', 'port')).toBe(0)
    expect(editDistance('prot', 'port')).toBe(1)
    expect(editDistance('', 'abc')).toBe(3)
    expect(editDistance('kitten', 'sitting')).toBe(3)
  })

  it("rewrites node's parser error into one line with the suggestion", () => {
    let error: unknown
    try {
      parseArgs({ args: ['--metric-port', '9464'], options: { 'metrics-port': { type: 'string' } } })
    } catch (caught) {
      error = caught
    }
    expect(explainParseError(error, serveFlags)).toBe('unknown option --metric-port (did you mean --metrics-port?)')
    expect(explainParseError(new Error('other\ntext'), serveFlags)).toBe('other')
  })
})

describe('listen failures', () => {
  it('names the setting, variable and flag to change', () => {
    expect(describeListenFailure('EADDRINUSE', { host: '127.0.0.1', port: 8787 }, 'server.port')).toBe(
      'port 127.0.0.1:8787 is already in use; set server.port (env CTXGATE_PORT, flag --port) to another port',
    )
    expect(describeListenFailure('EACCES', { host: '0.0.0.0', port: 80 }, 'metrics.port')).toMatch(
      /^metrics port 0\.0\.0\.0:80 needs privileges .*CTXGATE_METRICS_PORT, flag --metrics-port/,
    )
  })
})

describe('stopWhenParentExits', () => {
  afterEach(() => vi.useRealTimers())

  it('calls back once when the parent process changes, and not before', () => {
    vi.useFakeTimers()
    let parent = 100
    const exits: number[] = []
    stopWhenParentExits(() => exits.push(parent), { originalParent: 100, currentParent: () => parent, intervalMs: 500 })
    vi.advanceTimersByTime(2_000)
    expect(exits).toEqual([])
    parent = 1
    vi.advanceTimersByTime(500)
    vi.advanceTimersByTime(5_000)
    expect(exits).toEqual([1])
  })

  it('also notices a parent lost before the watch began', () => {
    vi.useFakeTimers()
    const exits: string[] = []
    stopWhenParentExits(() => exits.push('stopped'), { originalParent: 4321, currentParent: () => 1, intervalMs: 500 })
    vi.advanceTimersByTime(500)
    expect(exits).toEqual(['stopped'])
  })
})

describe('replay --export file names', () => {
  it('names a Claude Code session file by its id once, not twice', () => {
    const id = '83adc8a6-1b2c-4d5e-8f90-123456789abc'
    expect(exportFileName(`.claude/projects/x/${id}.jsonl`, id)).toBe(`${id}.ctxgate.jsonl`)
  })

  it('adds the id of each conversation a recording holds, and nothing for a one-conversation file', () => {
    // An OpenHands output file holds several runs, each named by its instance id.
    expect(exportFileName('runs/multi_swe_bench_examples_output.jsonl#2', 'ponylang__ponyc-4593')).toBe(
      'multi_swe_bench_examples_output.jsonl_2.ponylang__ponyc-4593.ctxgate.jsonl',
    )
    expect(exportFileName('runs/run.traj.json', 'runs/run.traj.json')).toBe('run.traj.ctxgate.jsonl')
    // An OpenAI message list is named by its file name: once.
    expect(exportFileName('runs/messages.json', 'messages.json')).toBe('messages.ctxgate.jsonl')
    // An id that is only part of the file's name is still added.
    expect(exportFileName('runs/session-abc.jsonl', 'abc')).toBe('session-abc.abc.ctxgate.jsonl')
  })
})
