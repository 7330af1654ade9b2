/**
 * Every text ctxgate puts into a conversation. Each is a pure function of what it replaces, so the
 * same decision always produces the same bytes (DESIGN §3.5), even after a restart.
 */
export const clearedNote =
  '[ctxgate: this tool result was cleared to keep the conversation within the model’s context window. Run the tool again if you need its output.]'

export const systemNote =
  'Note from ctxgate, the proxy in front of this model: to keep this conversation within the context window, older tool results may be replaced by a short note or summary. This is expected. Keep working on the task; do not stop early to save room. If you need an old output again, run the tool again.'

export function dropNote(scope: 'turns' | 'rounds', dropped: number): string {
  return scope === 'turns'
    ? `[ctxgate: ${dropped} earlier messages of this conversation were removed to keep it within the model’s context window. The task above still stands; the newest turns follow.]`
    : `[ctxgate: ${dropped} earlier messages (older tool calls and their results) were removed to keep this task within the model’s context window. Keep working on the task above; run a tool again if you need its output.]`
}

/** A short summary of a long tool output: its size, exit status if it shows one, and its first meaningful line. */
export function foldSummary(text: string): string {
  const lines = text.split('\n')
  const exit = /(?:exit(?:ed)?(?: with)?(?: code| status)?|returncode>?)\s*[:=]?\s*(-?\d+)/i.exec(text)
  const first =
    lines.map((line) => line.trim()).find((line) => line.length > 0 && !/^[-=#*_`~<>|+\s]+$/.test(line)) ?? ''
  const shown = first.length > 160 ? `${first.slice(0, 157)}...` : first
  const parts = [`${text.length.toLocaleString('en-US')} characters`, `${lines.length.toLocaleString('en-US')} lines`]
  if (exit) parts.push(`exit status ${exit[1]}`)
  return `[ctxgate folded this tool output (${parts.join(', ')}). It began: ${JSON.stringify(shown)}. Run the tool again if you need the full output.]`
}
