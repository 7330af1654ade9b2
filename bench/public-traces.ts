/**
 * The public agent runs BENCHMARKS.md was measured on: unchanged files from MIT-licensed GitHub
 * repositories, saved under the names the replay importers expect (a Claude Code stream-json log
 * needs its prompt beside it as NAME.prompt.txt).
 */
export interface PublicTrace {
  readonly saveAs: string
  readonly repository: string
  readonly commit: string
  readonly path: string
}

const claudeCode = (repository: string, commit: string, issue: string, name: string): PublicTrace[] => [
  {
    saveAs: `claude-code/${name}.agent_log_raw.jsonl`,
    repository,
    commit,
    path: `.ai-workflow/${issue}/04_implementation/execute/agent_log_raw.txt`,
  },
  {
    saveAs: `claude-code/${name.replace(/\.claude$/, '')}.prompt.txt`,
    repository,
    commit,
    path: `.ai-workflow/${issue}/04_implementation/execute/prompt.txt`,
  },
]

export const publicTraces: readonly PublicTrace[] = [
  ...claudeCode('tielec/infrastructure-as-code', 'e6b6d079', 'issue-398', 'issue-398_04_implementation_execute'),
  ...claudeCode('tielec/ai-workflow-agent', '41eae05c', 'issue-271', 'issue-271_04_implementation_execute.claude'),
  {
    saveAs: 'openhands/multi_swe_bench_examples_output.jsonl',
    repository: 'All-Hands-AI/OpenHands',
    commit: '3d225209',
    path: 'evaluation/benchmarks/multi_swe_bench/examples/output.jsonl',
  },
  {
    saveAs: 'mini-swe-agent/sqlfluff__sqlfluff-1733.traj.json',
    repository: 'SWE-agent/mini-swe-agent',
    commit: 'ec0e8e84',
    path: 'output/deepseek_chat_dev/sqlfluff__sqlfluff-1733/sqlfluff__sqlfluff-1733.traj.json',
  },
  {
    saveAs: 'mini-swe-agent/django__django-15629.traj.json',
    repository: 'gruckion/mini-swe-agent',
    commit: '9fbbfc54',
    path: 'swebench_results/20251118_gemini-3-pro-74pct/trajs/django__django-15629/django__django-15629.traj.json',
  },
]

/** What to print when no folder was given: where the runs come from and a script that fetches them. */
export function howToGetTraces(): string {
  const fetches = publicTraces.map(
    (trace) =>
      `curl -fsSL --create-dirs -o traces/${trace.saveAs} https://github.com/${trace.repository}/raw/${trace.commit}/${trace.path}`,
  )
  return [
    'Usage: npm run bench:replay -- FOLDER [--write]',
    '',
    'Replays every recording (*.json, *.jsonl) under FOLDER. The tables in BENCHMARKS.md come from seven',
    'public agent runs (Claude Code, OpenHands, mini-swe-agent) in MIT-licensed GitHub repositories;',
    'to fetch them into ./traces:',
    '',
    ...fetches,
    '',
    'then: npm run bench:replay -- traces',
    '',
  ].join('\n')
}
