import type { Logger } from 'pino'
import { onUnknownModel } from '../config/model-limits.ts'
import type { Config } from '../config/schema.ts'
import { ModelLabels } from './model-labels.ts'
import type { ProxyMetrics } from './proxy-metrics.ts'

/**
 * Counts every model call whose model only the catch-all entry matched, and warns once per model
 * family (at most as many warnings as there are model labels), naming the limits it got instead.
 */
export function reportUnknownModels(config: Readonly<Config>, metrics: ProxyMetrics, logger: Logger): void {
  const labels = new ModelLabels()
  const warned = new Set<string>()
  onUnknownModel(config, (model) => {
    const label = labels.of(model)
    metrics.unknownModelRequests.inc({ model: label })
    if (warned.has(label)) return
    warned.add(label)
    const fallback = config.models.find((entry) => entry.match === '*')
    logger.warn(
      { model: model.slice(0, 100), window: fallback?.window ?? null },
      fallback
        ? 'model matches no models: entry; using the catch-all "*" limits (add an entry with its window to your config file)'
        : 'model matches no models: entry; forwarded without rewriting (add an entry with its window to your config file)',
    )
  })
}
