import { existsSync, readFileSync } from 'node:fs'
import { appendMessage, textBlock, type Conversation, type Message } from '../conversation.ts'
import { recordedUsageNote, sumUsage } from './recorded-usage.ts'
import { usageOf } from './codex-rollout.ts'
import { standInSystemPrompt, standInTools } from './stand-ins.ts'
import { pairToolCalls } from './tool-pairing.ts'

type Json = Record<string, unknown>

export function looksLikeCodexExecJson(first: unknown): boolean {
  const line = first as Json | null
  return typeof line === 'object' && line !== null && line['type'] === 'thread.started' && 'thread_id' in line
}

/** Codex cut command output for the model at 10 KiB or 256 lines, keeping the head and the tail. */
const outputByteLimit = 10 * 1024
const outputLineLimit = 256

/**
 * `codex exec --json` events: finished items only (no request bodies). Each command becomes an
 * `exec_command` call with its output as the result, each agent message assistant text; one
 * request per tool call plus one per final answer, as Codex makes them one call at a time.
 */
export function importCodexExecJson(
  lines: readonly Json[],
  source: string,
  options: { readonly promptFile?: string },
): Conversation {
  const notes: string[] = []
  const promptPath = options.promptFile ?? promptBeside(source)
  const prompt = promptPath && existsSync(promptPath) ? readFileSync(promptPath, 'utf8') : undefined
  if (prompt === undefined)
    notes.push('the prompt is not in an exec --json log: a placeholder stands in (pass --prompt FILE)')
  const messages: Message[] = [{ role: 'user', content: [textBlock(prompt ?? '(the prompt of this run)')] }]
  const turns: Json[] = []
  const kinds = new Map<string, number>()
  for (const line of lines) {
    if (line['type'] === 'turn.completed') turns.push(line)
    const item = (line['item'] as Json | undefined) ?? {}
    // The plan is one item Codex starts and updates, one update_plan call each; its completion is not a call.
    const planCall =
      item['type'] === 'todo_list' && (line['type'] === 'item.started' || line['type'] === 'item.updated')
    if (!planCall && (line['type'] !== 'item.completed' || item['type'] === 'todo_list')) continue
    const kind = String(item['type'])
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1)
    appendExecItem(messages, item)
  }
  const paired = pairToolCalls(messages)
  const recorded = turns.length > 0 ? sumUsage(turns.map((turn) => usageOf(turn['usage']))) : undefined
  const { requests: _turnCount, ...usage } = recorded ?? {}
  const toolNames = new Set(
    paired.messages.flatMap((message) =>
      message.content.flatMap((block) => (block.type === 'tool_use' ? [block.name] : [])),
    ),
  )
  if ((kinds.get('file_change') ?? 0) > 0)
    notes.push(
      `${kinds.get('file_change')} file change(s): the log keeps only paths, so the patch bodies are stand-ins`,
    )
  notes.push('system prompt and tool schemas are stand-ins (exec --json keeps neither)')
  notes.push(
    `command output cut as Codex cut it for the model (${outputByteLimit / 1024} KiB or ${outputLineLimit} lines, head and tail)`,
  )
  if (recorded) notes.push(recordedUsageNote(usage))
  const thread = lines.find((line) => line['type'] === 'thread.started')
  return {
    id: String(thread?.['thread_id'] ?? source),
    source,
    model: 'gpt-5-codex',
    system: standInSystemPrompt('Codex'),
    tools: standInTools([...toolNames]),
    segments: [paired.messages],
    notes,
    ...(recorded ? { recordedUsage: usage } : {}),
  }
}

function appendExecItem(messages: Message[], item: Json): void {
  // A plan item is called again on each update: each call needs an id of its own.
  const base = String(item['id'] ?? 'item')
  const id = item['type'] === 'todo_list' ? `${base}_${messages.length}` : base
  const call = (name: string, input: unknown, output: string): void => {
    appendMessage(messages, { role: 'assistant', content: [{ type: 'tool_use', id, name, input }] })
    appendMessage(messages, { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: output }] })
  }
  switch (item['type']) {
    case 'agent_message':
      if (typeof item['text'] === 'string' && item['text'])
        appendMessage(messages, { role: 'assistant', content: [textBlock(item['text'])] })
      return
    case 'command_execution':
      return call(
        'exec_command',
        { cmd: String(item['command'] ?? '') },
        `Process exited with code ${String(item['exit_code'] ?? '?')}\nOutput:\n${cutLikeCodex(String(item['aggregated_output'] ?? ''))}`,
      )
    case 'file_change':
      return call('apply_patch', { input: patchStandIn(item) }, 'Success. Updated the files.')
    case 'mcp_tool_call':
      return call(
        `${String(item['server'] ?? 'mcp')}__${String(item['tool'] ?? 'tool')}`,
        item['arguments'] ?? {},
        JSON.stringify(item['result'] ?? item['error'] ?? ''),
      )
    case 'web_search':
      return call('web_search', { query: String(item['query'] ?? '') }, '(search results are not in the log)')
    case 'todo_list':
      return call('update_plan', { plan: item['items'] ?? [] }, 'Plan updated')
    default:
      return
  }
}

function patchStandIn(item: Json): string {
  const changes = (item['changes'] as Json[] | undefined) ?? []
  const body = changes.map((change) => `*** ${String(change['kind'] ?? 'update')} File: ${String(change['path'])}`)
  return ['*** Begin Patch', ...body, '*** End Patch'].join('\n')
}

export function cutLikeCodex(output: string): string {
  const lines = output.split('\n')
  if (Buffer.byteLength(output) <= outputByteLimit && lines.length <= outputLineLimit) return output
  const half = outputLineLimit / 2
  let head = lines.slice(0, half).join('\n')
  let tail = lines.slice(-half).join('\n')
  const budget = outputByteLimit / 2
  if (Buffer.byteLength(head) > budget) head = Buffer.from(head).subarray(0, budget).toString('utf8')
  if (Buffer.byteLength(tail) > budget) tail = Buffer.from(tail).subarray(-budget).toString('utf8')
  return `${head}\n[... omitted ${Math.max(0, lines.length - outputLineLimit)} of ${lines.length} lines ...]\n${tail}`
}

function promptBeside(logPath: string): string | undefined {
  const stem = logPath
    .replace(/\.jsonl$/, '')
    .replace(/\.codex-exec$/, '')
    .replace(/\.agent_log_raw$/, '')
  const candidate = `${stem}.prompt.txt`
  return existsSync(candidate) ? candidate : undefined
}
