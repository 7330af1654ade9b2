/**
 * The GenAI semantic conventions' ExplicitBucketBoundaries for gen_ai.client.token.usage (powers of 4 up to 2^26;
 * https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-metrics/): the OTLP histogram uses the same list.
 */
export const tokenBuckets = [
  1, 4, 16, 64, 256, 1024, 4096, 16_384, 65_536, 262_144, 1_048_576, 4_194_304, 16_777_216, 67_108_864,
]
