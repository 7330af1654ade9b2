import { replayConversation, directLabel, type ReplayOptions, type RunResult } from '../replay/run-replay.ts'
import { rowsFor, runName } from '../replay/report/rows.ts'
import { renderTable } from '../replay/report/table.ts'
import { combine } from '../replay/summarize.ts'
import { syntheticRuns } from '../replay/synthetic.ts'

/**
 * `ctxgate demo`: replays a synthetic long agent run (main agent plus a sub-agent) against the fake
 * upstream, straight and through ctxgate, at a 64k window, with and without client cache marks.
 * No network, no files, well under a minute.
 */
export async function demo(write: (text: string) => void = (text) => process.stdout.write(text)): Promise<void> {
  const conversations = syntheticRuns()
  for (const clientCache of ['none', 'rolling'] as const) {
    const options: ReplayOptions = {
      window: 64_000,
      minCacheableTokens: 1_024,
      maxTokens: 4_096,
      clientCache,
      stream: true,
      variants: [{ label: directLabel, direct: true }, { label: 'ctxgate' }],
    }
    const results: RunResult[] = []
    for (const conversation of conversations) results.push(await replayConversation(conversation, options))
    const rows = results.flatMap((result) => rowsFor(runName(result), result.summaries))
    const totals = rowsFor(
      'all runs',
      Object.fromEntries(
        ['direct', 'ctxgate'].map((label) => [
          label,
          combine(results.map((result) => result.summaries[label]).filter((summary) => summary !== undefined)),
        ]),
      ),
    )
    write(
      `\nSynthetic agent run, 64k window, client cache marks: ${clientCache}\n${renderTable([...rows, ...totals])}\n`,
    )
  }
  write(
    '\nColumns: refused = requests the model would reject for length; billed-eq input = input + 1.25 x 5-minute cache write + 2 x 1-hour cache write + 0.1 x cache read.\n' +
      'A refused request bills nothing, but the agent stops there: where direct requests were refused, "÷ direct" compares a run that failed with one that finished.\n' +
      'Replay your own run: ctxgate replay ~/.claude/projects/PROJECT/SESSION.jsonl --window 64000 --html report.html\n',
  )
}
