import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  agentCommands,
  rereadFiles,
  countStepsDone,
  isSummaryRequest,
  planAgentReply,
  shellToolFrom,
  stepsDoneMarker,
  type LoopMessage,
} from '../../src/mock/agent-loop.ts'

const schema = (properties: Record<string, unknown>) => ({ type: 'object', properties })

describe('which tools look like a shell', () => {
  it("fills Claude Code's Bash tool with a command and a description", () => {
    const tool = shellToolFrom('Bash', schema({ command: { type: 'string' }, description: { type: 'string' } }))
    expect(tool?.argumentsFor('seq 1 3', 'Count')).toEqual({ command: 'seq 1 3', description: 'Count' })
  })

  it('knows generic shell names, a cmd argument and a command given as an argument list', () => {
    expect(shellToolFrom('bash', schema({ command: { type: 'string' } }))?.argumentsFor('ls', 'x')).toEqual({
      command: 'ls',
    })
    expect(shellToolFrom('run_command', schema({ cmd: { type: 'string' } }))?.argumentsFor('ls', 'x')).toEqual({
      cmd: 'ls',
    })
    expect(shellToolFrom('shell', schema({ command: { type: 'array' } }))?.argumentsFor('ls', 'x')).toEqual({
      command: ['bash', '-lc', 'ls'],
    })
    expect(shellToolFrom('execute_in_terminal', schema({ command: { type: 'string' } }))).toBeDefined()
  })

  it('leaves other tools alone, even ones with a command-like name but no command argument', () => {
    expect(shellToolFrom('Read', schema({ file_path: { type: 'string' } }))).toBeUndefined()
    expect(shellToolFrom('exec_report', schema({ report: { type: 'string' } }))).toBeUndefined()
    expect(shellToolFrom('lookup', undefined)).toBeUndefined()
  })
})

describe('counting steps', () => {
  it('counts tool results, and restarts from the count a mock summary carries', () => {
    const messages: LoopMessage[] = [
      { toolResults: 0, text: 'go' },
      { toolResults: 1, text: '' },
      { toolResults: 1, text: '' },
      { toolResults: 0, text: `summary… ${stepsDoneMarker} 7 of 9` },
      { toolResults: 1, text: '' },
    ]
    expect(countStepsDone(messages.slice(0, 3))).toBe(2)
    expect(countStepsDone(messages)).toBe(8)
  })

  it("recognizes Claude Code's compaction prompt and not an ordinary request", () => {
    expect(
      isSummaryRequest('Your task is to create a detailed summary of the conversation so far, paying close attention'),
    ).toBe(true)
    expect(isSummaryRequest('This session is being continued from a previous conversation, summarized below')).toBe(
      false,
    )
    expect(isSummaryRequest('Run some shell commands')).toBe(false)
  })
})

describe('the next reply', () => {
  it('runs the commands in turn, then answers in text', () => {
    const first = planAgentReply(3, 0, false)
    expect(first).toMatchObject({ kind: 'tool', step: 1, command: agentCommands[0]?.command })
    expect(planAgentReply(3, 2, false)).toMatchObject({
      kind: 'tool',
      step: 3,
      narration: expect.stringMatching(/^Step 3 of 3/),
    })
    expect(planAgentReply(3, 3, false)).toMatchObject({ kind: 'final' })
    expect(planAgentReply(0, 0, false)).toMatchObject({ kind: 'final' })
    expect(planAgentReply(200, 3 + agentCommands.length, false)).toMatchObject({ command: agentCommands[3]?.command })
  })

  it('answers a summary request with a summary that carries the count', () => {
    const reply = planAgentReply(9, 4, true)
    expect(reply.kind).toBe('summary')
    expect(countStepsDone([{ toolResults: 0, text: reply.kind === 'summary' ? reply.text : '' }])).toBe(4)
  })

  it('ends after exactly N tool calls, however often the client compacts its history', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 40 }), fc.array(fc.boolean(), { maxLength: 60 }), (steps, compactAt) => {
        let history: LoopMessage[] = [{ toolResults: 0, text: 'run the commands' }]
        let toolCalls = 0
        for (let turn = 0; turn < 200; turn++) {
          if (compactAt[turn] === true) {
            const summary = planAgentReply(steps, countStepsDone(history), true)
            if (summary.kind !== 'summary') return false
            history = [{ toolResults: 0, text: summary.text }]
          }
          const reply = planAgentReply(steps, countStepsDone(history), false)
          if (reply.kind === 'final') return toolCalls === steps
          if (reply.kind !== 'tool' || reply.step !== toolCalls + 1) return false
          toolCalls++
          history.push({ toolResults: 0, text: reply.narration }, { toolResults: 1, text: '' })
        }
        return false
      }),
    )
  })
})

describe('the re-read loop', () => {
  const commands = (steps: number, every: number): string[] =>
    Array.from({ length: steps }, (_, done) => {
      const reply = planAgentReply(steps, done, false, every)
      return reply.kind === 'tool' ? reply.command : ''
    })

  it('reads the files first, then every N-th step reads one again, the least recently read', () => {
    const run = commands(30, 10)
    expect(run.slice(0, 3)).toEqual(rereadFiles.map((file) => `cat ${file}`))
    expect([run[9], run[19], run[29]]).toEqual(rereadFiles.map((file) => `cat ${file}`))
  })

  it('repeats no other call: every other step prints output no other step prints', () => {
    const run = commands(60, 7)
    const repeated = run.filter((command, index) => run.indexOf(command) !== index)
    expect(repeated).toHaveLength(Math.floor(60 / 7))
    expect(repeated.every((command) => command.startsWith('cat '))).toBe(true)
  })

  it('leaves the ten-command loop as it was without the setting', () => {
    expect(planAgentReply(20, 12, false)).toMatchObject({ command: agentCommands[2]?.command })
  })
})
