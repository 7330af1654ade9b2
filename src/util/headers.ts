/** The first value of a header Node may have split into several (`set-cookie`-style arrays). */
export function firstHeader(value: string | readonly string[] | undefined): string | undefined {
  return typeof value === 'string' || value === undefined ? value : value[0]
}

/**
 * The answer is an event stream: its media type (before any parameters) is text/event-stream. The
 * relay, the refit's in-stream check and the request's record all ask this one question.
 */
export function isEventStream(contentType: string | readonly string[] | undefined): boolean {
  return (firstHeader(contentType) ?? '').toLowerCase().startsWith('text/event-stream')
}
