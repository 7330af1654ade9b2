import { readFileSync } from 'node:fs'
import { Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { createProxyMetrics } from '../../src/metrics/proxy-metrics.ts'

interface Panel {
  readonly title: string
  readonly targets?: readonly { readonly expr: string }[]
}
const dashboard = JSON.parse(
  readFileSync(new URL('../../deploy/grafana/ctxgate-dashboard.json', import.meta.url), 'utf8'),
) as {
  templating: { list: { name: string; query?: unknown }[] }
  panels: Panel[]
  links?: { title: string; url: string }[]
}
const expressions = dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr))
/** Every metric selector in an expression: the name and what is between its braces. */
const selectors = (expr: string) =>
  [...expr.matchAll(/\b((?:ctxgate|gen_ai)_[a-z0-9_]+)\{([^}]*)\}/g)].map(([, name, labels]) => ({
    name: name as string,
    labels: labels as string,
  }))

describe('Grafana dashboard', () => {
  it('offers job, instance and model variables, and every query uses them', () => {
    expect(dashboard.templating.list.map((variable) => variable.name)).toEqual([
      'datasource',
      'job',
      'instance',
      'model',
    ])
    for (const expr of expressions) {
      const found = selectors(expr)
      expect(found.length, expr).toBeGreaterThan(0)
      for (const { labels } of found) expect(labels, expr).toMatch(/job=~"\$job",instance=~"\$instance"/)
    }
    const tokens = expressions.filter((expr) => expr.includes('ctxgate_tokens_total'))
    expect(tokens.length).toBeGreaterThan(0)
    for (const expr of tokens) expect(expr).toContain('model=~"$model"')
  })

  it('queries only metrics ctxgate exports', async () => {
    const registry = new Registry()
    createProxyMetrics(registry)
    const exported = new Set((await registry.getMetricsAsJSON()).map((metric) => metric.name))
    for (const expr of expressions)
      for (const { name } of selectors(expr)) expect(exported, name).toContain(name.replace(/_(bucket|sum|count)$/, ''))
  })

  it('keeps output tokens out of "Prompt tokens by kind", and shows store errors', () => {
    const prompt = dashboard.panels.find((panel) => panel.title.startsWith('Prompt tokens by kind'))
    expect(prompt?.targets?.[0]?.expr).toContain('kind!="output"')
    expect(expressions.some((expr) => expr.includes('ctxgate_store_errors_total'))).toBe(true)
  })

  it('links to the model call spans ctxgate exports, in Tempo', () => {
    const link = dashboard.links?.find((candidate) => candidate.title.includes('traces'))
    const panes = JSON.parse(new URL(link?.url ?? '', 'http://grafana').searchParams.get('panes') ?? '{}') as {
      a?: { queries?: { query: string; queryType: string }[] }
    }
    expect(panes.a?.queries?.[0]?.queryType).toBe('traceql')
    expect(panes.a?.queries?.[0]?.query).toBe(
      '{ resource.service.name = "ctxgate" && span.gen_ai.operation.name = "chat" }',
    )
  })
})
