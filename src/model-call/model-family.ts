import { memoizeByName } from '../memoize-by-name.ts'

/**
 * Dated snapshots share a tokenizer and a label with their family: claude-sonnet-4-5-20250929 →
 * claude-sonnet-4-5, gpt-4o-2024-08-06 → gpt-4o (older OpenAI snapshots end in -MMDD: gpt-4-0613 → gpt-4).
 */
export const modelFamily = memoizeByName((model) =>
  withoutOpenAIDate(model.replace(/-(\d{8}|latest)$/, '').replace(/@.*$/, '')),
)

export function withoutOpenAIDate(model: string): string {
  return model.replace(/-\d{4}-\d{2}-\d{2}$/, '').replace(/^(gpt-[\w.-]+?)-(0[1-9]|1[0-2])\d{2}$/, '$1')
}
