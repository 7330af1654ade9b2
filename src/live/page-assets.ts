import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

/** A file the page loads from ctxgate itself; nothing comes from outside. */
export interface PageAsset {
  readonly contentType: string
  readonly body: string
}

export type AssetName =
  'uplot.js' | 'uplot.css' | 'token-chart.js' | 'holdout-table.js' | 'live-page.js' | 'live-page.css'

const require = createRequire(import.meta.url)

/** Reads uPlot from its npm package and the page's own scripts once, at start-up. */
export function loadPageAssets(): Readonly<Record<AssetName, PageAsset>> {
  const js = 'text/javascript; charset=utf-8'
  const css = 'text/css; charset=utf-8'
  return {
    'uplot.js': { contentType: js, body: readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8') },
    'uplot.css': { contentType: css, body: readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8') },
    'token-chart.js': { contentType: js, body: readOwn('token-chart.js') },
    'holdout-table.js': { contentType: js, body: readOwn('holdout-table.js') },
    'live-page.js': { contentType: js, body: readOwn('live-page.js') },
    'live-page.css': { contentType: css, body: readOwn('live-page.css') },
  }
}

let cached: Readonly<Record<AssetName, PageAsset>> | undefined

/** The same files for every page and report in this process. */
export function pageAssets(): Readonly<Record<AssetName, PageAsset>> {
  cached ??= loadPageAssets()
  return cached
}

/** The browser scripts sit next to this module (`npm run build` copies them into dist). */
function readOwn(name: string): string {
  return readFileSync(new URL(`./browser/${name}`, import.meta.url), 'utf8')
}
