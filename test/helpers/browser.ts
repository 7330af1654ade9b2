import { existsSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'

/** Debian's chromium (.ci/run installs it); playwright's own browser downloads are not used. */
export const chromiumPath = '/usr/bin/chromium'

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(chromiumPath))
    throw new Error(`no browser at ${chromiumPath}: install Debian's chromium package (.ci/run does)`)
  return chromium.launch({ executablePath: chromiumPath, headless: true })
}
