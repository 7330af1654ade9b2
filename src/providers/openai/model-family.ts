/** OpenAI's dated snapshots: gpt-4o-2024-08-06 → gpt-4o, and the older -MMDD ones: gpt-4-0613 → gpt-4. */
export function withoutOpenAIDate(model: string): string {
  return model.replace(/-\d{4}-\d{2}-\d{2}$/, '').replace(/^(gpt-[\w.-]+?)-(0[1-9]|1[0-2])\d{2}$/, '$1')
}
