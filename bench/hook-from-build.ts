/**
 * The rewrite hook (Anthropic Messages, default config, memory store, logs off) loaded from a build:
 * this checkout's `src/` (extension `ts`) or any checkout's compiled `dist/` (`js`), older layouts
 * included, so a bench can time two builds side by side.
 */
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

/** The hook as forward.ts calls it. */
export type BuiltHook = (
  body: Buffer,
  headers: Record<string, string>,
  options: { recordsAfterDispatch: boolean },
) => Promise<{ kind: string; prepared?: { afterDispatch?: () => Promise<unknown> } }>

/** With `reference`, the estimator counts each prompt by the reference vocabulary as well, as ctxgate's does. */
export async function hookFromBuild(
  root: string,
  extension: 'ts' | 'js',
  { reference }: { readonly reference: boolean },
): Promise<BuiltHook> {
  const load = (path: string) => import(pathToFileURL(resolve(root, `${path}.${extension}`)).href)
  const { loadConfig } = await load('config/load-config')
  const { createLogger } = await load('log/logger')
  // Builds before calibration got its own folder kept it in rewrite/.
  const { Calibration } = await load('calibration/calibration').catch(() => load('rewrite/calibration'))
  const { TokenEstimator } = await load('rewrite/estimate')
  // Builds before the forwarding pipeline's split kept the hook in routes/.
  const { createRewriteHook } = await load('forward/rewrite-hook/hook').catch(() => load('routes/rewrite-hook'))
  const { MemorySessionStore } = await load('session/memory-store')
  const counters = reference ? (await load('providers/registry')).exactCounters : undefined
  const config = loadConfig({})
  return createRewriteHook({
    config,
    store: new MemorySessionStore(config.sessions),
    calibration: new Calibration(),
    estimator: new TokenEstimator(counters),
    logger: createLogger('silent'),
  })('anthropic-messages') as BuiltHook
}
