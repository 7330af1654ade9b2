import type { RecordedUsage } from '../conversation.ts'

const known = (value: number | undefined): string => (value === undefined ? '?' : value.toLocaleString('en-US'))

/** The report's line for what the agent's own log says it used, beside the replayed figures. */
export function recordedUsageNote(recorded: RecordedUsage): string {
  const parts = [
    ...(recorded.requests === undefined ? [] : [`${known(recorded.requests)} requests`]),
    `input ${known(recorded.inputTokens)}`,
    `cache write ${known(recorded.cacheWriteTokens)}`,
    `cache read ${known(recorded.cacheReadTokens)}`,
    `output ${known(recorded.outputTokens)}`,
    ...(recorded.costUsd === undefined ? [] : [`$${recorded.costUsd.toFixed(2)}`]),
  ]
  return `recorded by the agent itself: ${parts.join(', ')}`
}

/** Adds up per-request usage records, leaving out a field no record carried. */
export function sumUsage(records: readonly RecordedUsage[]): RecordedUsage {
  const sum = (key: keyof RecordedUsage): number | undefined =>
    records.some((record) => record[key] !== undefined)
      ? records.reduce((total, record) => total + (record[key] ?? 0), 0)
      : undefined
  const fields: (keyof RecordedUsage)[] = [
    'inputTokens',
    'cacheReadTokens',
    'cacheWriteTokens',
    'outputTokens',
    'costUsd',
  ]
  const usage: Record<string, number> = { requests: records.length }
  for (const field of fields) {
    const value = sum(field)
    if (value !== undefined) usage[field] = value
  }
  return usage as RecordedUsage
}
