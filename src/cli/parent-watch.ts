/**
 * Under `npm start` the parent is npm: if it dies without forwarding a signal (SIGKILL, a crashed
 * process manager), ctxgate would live on as an orphan holding the port. This notices the parent
 * change and shuts down the same way SIGTERM does.
 */
export function stopWhenParentExits(
  onParentExit: () => void,
  options: {
    /** The parent as first seen, read before start-up work so a parent lost meanwhile still counts. */
    readonly originalParent: number
    readonly currentParent?: () => number
    readonly intervalMs?: number
  },
): () => void {
  const currentParent = options.currentParent ?? (() => process.ppid)
  const original = options.originalParent
  const timer = setInterval(() => {
    if (currentParent() === original) return
    clearInterval(timer)
    onParentExit()
  }, options.intervalMs ?? 1_000)
  // Never the reason the process stays alive.
  timer.unref()
  return () => clearInterval(timer)
}

/** True when npm (or another package manager's run-script) started this process for a script. */
export function startedByPackageScript(env: NodeJS.ProcessEnv): boolean {
  return env['npm_lifecycle_event'] !== undefined
}
