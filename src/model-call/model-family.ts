import { memoizeByName } from '../memoize-by-name.ts'

/** Dated snapshots share a tokenizer and a label with their family: claude-sonnet-4-5-20250929 → claude-sonnet-4-5. */
export const modelFamily = memoizeByName((model) => model.replace(/-(\d{8}|latest)$/, '').replace(/@.*$/, ''))
