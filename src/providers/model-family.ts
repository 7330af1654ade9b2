import { memoizeByName } from '../memoize-by-name.ts'
import { withoutOpenAIDate } from './openai/model-family.ts'

/**
 * Dated snapshots share a tokenizer and a label with their family: claude-sonnet-4-5-20250929 →
 * claude-sonnet-4-5 (an -YYYYMMDD or -latest suffix, or a Vertex @version), and each provider's own
 * dated names (providers/openai/model-family.ts).
 */
export const modelFamily = memoizeByName((model) =>
  withoutOpenAIDate(model.replace(/-(\d{8}|latest)$/, '').replace(/@.*$/, '')),
)
