/**
 * Claude Code sends the files a prompt names with `@path` along with the first request, and its
 * logs leave them out: a replay of such a log sends less than the agent did.
 */
export function attachmentNote(prompt: string): string[] {
  const named = [...prompt.matchAll(/(?:^|\s)@([\w./-]+\w)/g)].map((match) => match[1])
  if (named.length === 0) return []
  const shown = named.slice(0, 3).join(', ')
  return [
    `the prompt names ${named.length} file(s) with @ (${shown}${named.length > 3 ? ', …' : ''}): Claude Code sent their contents with the first request, the log leaves them out, so every replayed request is smaller than the real one`,
  ]
}
