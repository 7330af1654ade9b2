import { isJsonObject, type Json } from '../util/json.ts'

/**
 * A client asking the model to summarize the conversation so it can start over from the summary
 * (its own compaction). The answer is read once; the next request begins a new history, so a cache
 * entry written at the end of this one is never read (docs/dead-writes.md). Recognised from the
 * prompt texts the clients send, each a sentence of their own:
 * - Claude Code: its compact prompt, sent as the last user message (full and partial compaction),
 *   and its summarizer system prompt;
 * - opencode: the prompt it appends as the last user message (packages/opencode/src/session/compaction.ts;
 *   an older release's wording too) and its compaction agent's system prompt (agent/prompt/compaction.txt);
 * - Codex: its local compaction prompt (codex-rs/core/templates/compact/prompt.md), sent as the last
 *   user input item through the normal Responses endpoint.
 * Pure: the mock imports it too, so both sides recognise the same requests.
 */
export type CompactingClient = 'claude-code' | 'opencode' | 'codex'

const lastUserPrompts: readonly (readonly [CompactingClient, RegExp])[] = [
  [
    'claude-code',
    /Your task is to create a detailed summary of the (?:conversation so far|RECENT portion of the conversation)/i,
  ],
  ['opencode', /Provide a detailed prompt for continuing our conversation above/i],
  ['opencode', /Provide a detailed but concise summary of our conversation above/i],
  ['codex', /You are performing a CONTEXT CHECKPOINT COMPACTION/i],
]

const systemPrompts: readonly (readonly [CompactingClient, RegExp])[] = [
  ['claude-code', /You are a helpful AI assistant tasked with summarizing conversations/i],
  ['opencode', /You are summarizing a conversation for continuation by another agent/i],
]

/** Which client's compaction prompt a user turn's text is, if any. */
export function compactionPromptOf(text: string): CompactingClient | undefined {
  return firstMatch(lastUserPrompt, lastUserPrompts, text)
}

/** Which client's summarizer system prompt this is, if any. */
export function compactionSystemPromptOf(text: string): CompactingClient | undefined {
  return firstMatch(systemPrompt, systemPrompts, text)
}

/** The prompts as one alternation: an ordinary turn's text is searched once, not once per prompt. */
function oneOf(prompts: readonly (readonly [CompactingClient, RegExp])[]): RegExp {
  // Joined by their sources, so each must search as the alternation does: case-blind and nothing more.
  for (const [, pattern] of prompts)
    if (pattern.flags !== 'i') throw new Error(`compaction prompt ${pattern} must have only the i flag`)
  return new RegExp(prompts.map(([, pattern]) => pattern.source).join('|'), 'i')
}

const lastUserPrompt = oneOf(lastUserPrompts)
const systemPrompt = oneOf(systemPrompts)

/** The first prompt in the list the text holds; the list is searched one by one only when the text holds one. */
function firstMatch(
  combined: RegExp,
  prompts: readonly (readonly [CompactingClient, RegExp])[],
  text: string,
): CompactingClient | undefined {
  if (!combined.test(text)) return undefined
  return prompts.find(([, pattern]) => pattern.test(text))?.[0]
}

/**
 * The client whose compaction request this body is (a Messages, Chat Completions or Responses
 * body), from its last user turn or its system prompt; undefined for an ordinary request.
 */
export function compactionRequestOf(body: Json): CompactingClient | undefined {
  const lastUser = lastUserText(body)
  const fromPrompt = lastUser === undefined ? undefined : compactionPromptOf(lastUser)
  if (fromPrompt) return fromPrompt
  const system = systemText(body)
  return system === '' ? undefined : compactionSystemPromptOf(system)
}

/** The text of the request's last item when it is the user's (Messages and Chat `messages`, Responses `input`). */
function lastUserText(body: Json): string | undefined {
  const list = Array.isArray(body['messages']) ? body['messages'] : body['input']
  if (typeof list === 'string') return list
  if (!Array.isArray(list) || list.length === 0) return undefined
  const last: unknown = list[list.length - 1]
  if (!isJsonObject(last) || last['role'] !== 'user') return undefined
  return textOf(last['content'])
}

/** Messages `system`, Responses `instructions`, and Chat's leading system or developer messages. */
function systemText(body: Json): string {
  const parts = [textOf(body['system']), textOf(body['instructions'])]
  if (Array.isArray(body['messages']))
    for (const message of body['messages'] as unknown[]) {
      if (!isJsonObject(message) || (message['role'] !== 'system' && message['role'] !== 'developer')) break
      parts.push(textOf(message['content']))
    }
  return parts.filter((part) => part !== '').join('\n')
}

/** Text of a string or of the text parts of a content list (`text`, `input_text`); tool results are not prompts. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content
    .filter(isJsonObject)
    .filter((part) => part['type'] === 'text' || part['type'] === 'input_text')
    .map((part) => String(part['text'] ?? ''))
    .join('\n')
}
