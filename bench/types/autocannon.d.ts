/** The part of autocannon's API the benchmarks use (the package ships no types). */
declare module 'autocannon' {
  interface Result {
    requests: { average: number }
    latency: { p50: number; p99: number }
    errors: number
    non2xx: number
  }
  interface Options {
    url: string
    method?: string
    connections?: number
    duration?: number
    headers?: Record<string, string>
    body?: string
  }
  export default function autocannon(options: Options): Promise<Result>
}
