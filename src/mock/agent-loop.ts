/**
 * The mock's agent tool loop, independent of wire format: which offered tool looks like a shell,
 * how many steps a conversation has already taken, and what the next reply is. Pure: no I/O.
 */

type Json = Record<string, unknown>

/** A shell-like tool the client offered, and how to fill in its arguments. */
export interface ShellTool {
  readonly name: string
  readonly argumentsFor: (command: string, description: string) => Json
}

/** One message reduced to what step counting needs. */
export interface LoopMessage {
  readonly toolResults: number
  readonly text: string
  /** The ids of the calls its tool results answer (the mock's own ids carry the step number). */
  readonly resultIds?: readonly string[]
}

export type AgentReply =
  | {
      readonly kind: 'tool'
      readonly step: number
      readonly narration: string
      readonly command: string
      readonly description: string
    }
  | { readonly kind: 'summary'; readonly text: string }
  | { readonly kind: 'final'; readonly text: string }

interface AgentCommand {
  readonly command: string
  readonly description: string
}

/**
 * Harmless, read-only commands that print a lot (most 10-25 KB, under the ~30 KB a harness like
 * Claude Code keeps inline before it saves the output to a file), so a run grows like a real one.
 */
export const agentCommands: readonly AgentCommand[] = [
  { command: 'seq 1 4000', description: 'Count from 1 to 4000' },
  { command: 'ls -laR /usr/share/doc | head -n 350', description: 'List the installed documentation' },
  { command: 'cat /etc/services', description: 'Show the service name table' },
  { command: 'ps aux', description: 'List running processes' },
  {
    command: `awk 'BEGIN { for (i = 1; i <= 600; i++) printf "row %d square %d cube %d\\n", i, i * i, i * i * i }'`,
    description: 'Print a table of squares and cubes',
  },
  { command: 'od -A x -t x1z -N 4096 /bin/ls', description: 'Hex dump the start of /bin/ls' },
  { command: 'find /usr/lib -maxdepth 2 | sort | head -n 500', description: 'List libraries under /usr/lib' },
  { command: 'cat /proc/cpuinfo /proc/meminfo', description: 'Show CPU and memory details' },
  { command: 'ls -la /usr/bin | head -n 300', description: 'List programs in /usr/bin' },
  { command: 'uname -a && cat /etc/os-release', description: 'Show the system version' },
]

/** Written into the mock's summaries, so step counting survives the client compacting its history. */
export const stepsDoneMarker = 'ctxgate mock agent steps done:'

const shellNames = new Set([
  'bash',
  'shell',
  'run_command',
  'run_shell_command',
  'execute_command',
  'exec_command',
  'terminal',
  'run_terminal_cmd',
])

/** A tool is shell-like by a well-known name, or by a shell-ish name with a command argument. */
export function shellToolFrom(name: string, schema: unknown): ShellTool | undefined {
  const properties = propertiesOf(schema)
  const commandKey = 'command' in properties ? 'command' : 'cmd' in properties ? 'cmd' : undefined
  const known = shellNames.has(name.toLowerCase())
  if (!known && !(commandKey && /bash|shell|command|terminal|exec/i.test(name))) return undefined
  const key = commandKey ?? 'command'
  const asArray = (properties[key] as Json | undefined)?.['type'] === 'array'
  const takesDescription = 'description' in properties
  return {
    name,
    argumentsFor: (command, description) => ({
      [key]: asArray ? ['bash', '-lc', command] : command,
      ...(takesDescription ? { description } : {}),
    }),
  }
}

function propertiesOf(schema: unknown): Json {
  if (typeof schema !== 'object' || schema === null) return {}
  const properties = (schema as Json)['properties']
  return typeof properties === 'object' && properties !== null ? (properties as Json) : {}
}

/**
 * Steps done: tool results since the latest mock summary plus the steps that summary says were
 * done, or the newest step id the agent echoed back in a result's call id, whichever is more. The
 * ids survive a proxy dropping whole old rounds; the summary survives the client compacting.
 */
export function countStepsDone(messages: readonly LoopMessage[]): number {
  let done = 0
  let newestId = 0
  for (const message of messages) {
    const marked = stepsFromSummary(message.text)
    done = marked === undefined ? done + message.toolResults : marked + message.toolResults
    for (const id of message.resultIds ?? []) newestId = Math.max(newestId, stepOfCallId(id) ?? 0)
  }
  return Math.max(done, newestId)
}

/** The mock's call ids: `<prefix>_mock_s<step>_<sequence>`, so a result names the step it answers. */
export function mockCallId(prefix: string, step: number, sequence: number): string {
  return `${prefix}_mock_s${step}_${sequence}`
}

export function stepOfCallId(id: string): number | undefined {
  const match = /_mock_s(\d+)_\d+$/.exec(id)
  return match ? Number(match[1]) : undefined
}

/**
 * The newest step the conversation narrates ("Step 7 of 40: …"). A client that compacts by
 * quoting the whole conversation as text into one request (opencode) keeps no call ids, only this.
 */
export function newestNarratedStep(text: string): number {
  let newest = 0
  for (const match of text.matchAll(/Step (\d+) of \d+:/g)) newest = Math.max(newest, Number(match[1]))
  return newest
}

function stepsFromSummary(text: string): number | undefined {
  const at = text.lastIndexOf(stepsDoneMarker)
  if (at < 0) return undefined
  const match = /^\s*(\d+)/.exec(text.slice(at + stepsDoneMarker.length))
  return match ? Number(match[1]) : undefined
}

/**
 * Phrases agent harnesses use when they ask the model to summarize the conversation so far:
 * Claude Code's, Codex's ("CONTEXT CHECKPOINT COMPACTION") and opencode's summarization agent.
 */
const summaryRequestPatterns = [
  /create a detailed summary of the conversation/i,
  /summar(?:y|ize|ise) (?:of )?(?:the|this) (?:conversation|session)/i,
  /tasked with summari[sz]ing conversations/i,
  /performing a CONTEXT CHECKPOINT COMPACTION/,
  /you are a context summarization agent/i,
]

export function isSummaryRequest(text: string): boolean {
  return summaryRequestPatterns.some((pattern) => pattern.test(text))
}

/** Files the re-read loop reads first and again many steps later (present on Debian and Ubuntu; a missing one just prints an error). */
export const rereadFiles: readonly string[] = ['/etc/services', '/etc/ssl/openssl.cnf', '/etc/login.defs']

/**
 * The re-read loop (`--agent-reread-every N`): the first steps read the files above, every N-th
 * step reads one of them again, the least recently read, and every other step prints output no
 * other step prints. So the only repeated calls are the re-reads, each of a file read many steps
 * before: what ctxgate counts as a re-fetch when it cleared that read (docs/mock.md).
 */
export function rereadCommand(step: number, every: number): AgentCommand {
  if (step <= rereadFiles.length) {
    const file = rereadFiles[step - 1] as string
    return { command: `cat ${file}`, description: `Read ${file}` }
  }
  if (step % every === 0) {
    const file = rereadFiles[(step / every - 1) % rereadFiles.length] as string
    return { command: `cat ${file}`, description: `Read ${file} again` }
  }
  const from = step * 10_000 + 1
  return { command: `seq ${from} ${from + 3_499}`, description: `Count from ${from} to ${from + 3_499}` }
}

/**
 * The next reply of an agent that runs `steps` commands, one per turn, then says it is done: the
 * ten commands in turn, or, with `rereadEvery`, the re-read loop.
 */
export function planAgentReply(steps: number, done: number, summaryRequested: boolean, rereadEvery = 0): AgentReply {
  if (summaryRequested) {
    return {
      kind: 'summary',
      text: `<analysis>\nThe user asked for a long run of shell commands; each printed a lot of output.\n</analysis>\n\n<summary>\n1. Primary request: run ${steps} shell commands, one per step, and report when done.\n2. Progress: ${stepsDoneMarker} ${done} of ${steps}.\n3. Next step: keep running the remaining commands.\n</summary>`,
    }
  }
  if (done >= steps) {
    return { kind: 'final', text: `All ${steps} steps are done: every command ran and printed its output.` }
  }
  const step = done + 1
  const { command, description } =
    rereadEvery > 0 ? rereadCommand(step, rereadEvery) : (agentCommands[done % agentCommands.length] as AgentCommand)
  return { kind: 'tool', step, command, description, narration: `Step ${step} of ${steps}: ${description}.` }
}
