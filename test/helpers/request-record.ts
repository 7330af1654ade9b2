import type { RequestRecord } from '../../src/request/request-record.ts'

/** A completed Messages call's record, as the forwarder builds it, with whatever the test changes. */
export const completedRecord = (overrides: Partial<RequestRecord> = {}): RequestRecord => ({
  route: 'anthropic-messages',
  provider: 'anthropic',
  status: 200,
  outcome: 'complete',
  attempts: 1,
  retries: [],
  durationMs: 12,
  ...overrides,
})
