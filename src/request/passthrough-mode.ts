import type { IncomingHttpHeaders } from 'node:http'
import { firstHeader } from '../util/headers.ts'

/** The client asked ctxgate to leave this request as it is (`x-ctxgate-mode: passthrough`, docs/configuration.md). */
export function asksForPassthrough(incoming: IncomingHttpHeaders): boolean {
  return firstHeader(incoming['x-ctxgate-mode'])?.trim().toLowerCase() === 'passthrough'
}
