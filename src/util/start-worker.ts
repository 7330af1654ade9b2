import { access } from 'node:fs'
import { Worker, type ResourceLimits } from 'node:worker_threads'

/**
 * A worker thread from the compiled module beside the caller, or from its TypeScript source through
 * tsx (tests, `npm run dev`: only they have the sources). `name` is the module's name without its
 * extension, resolved against `callerUrl` (the caller's `import.meta.url`).
 */
export function startModuleWorker(
  callerUrl: string,
  name: string,
  workerData: unknown,
  resourceLimits?: ResourceLimits,
): Worker {
  const compiled = !callerUrl.endsWith('.ts')
  const file = new URL(`./${name}${compiled ? '.js' : '.ts'}`, callerUrl)
  // libuv starts its thread pool on first use and new threads inherit their starter's nice value:
  // one async fs call here has this thread start it, so a worker's own low priority stays its own.
  access(file, () => {})
  const limits = resourceLimits ? { resourceLimits } : {}
  const worker = compiled
    ? new Worker(file, { workerData, ...limits })
    : new Worker(
        `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(file.href)}) })`,
        { eval: true, workerData, ...limits },
      )
  // A worker never holds the process open: its owner ends it (or lets it go when idle).
  worker.unref()
  return worker
}
