// What the page's plain scripts share through `window`, for their `// @ts-check` (npm run typecheck).
interface Window {
  /** uPlot's IIFE build, loaded first (node_modules/uplot/dist/uPlot.iife.min.js). */
  uPlot: any
  /** token-chart.js: draws one session's requests. */
  ctxgateTokenChart: (...args: any[]) => any
  /** token-chart.js: number formats the page shares with the chart. */
  ctxgateFormat: {
    compact(value: number | null | undefined): string
    exact(value: number | null | undefined): string
    percent(part: number, whole: number): string
  }
}
