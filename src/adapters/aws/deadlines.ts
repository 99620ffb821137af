// Every AWS SDK client the product builds gets a deadline per request. Without one, a call whose
// answer never comes (a half-open connection, a stalled endpoint) lasts until the Lambda's own
// timeout kills the invocation in the middle of a step; with one, it fails like any API error: the
// step is retried by the SDK, then reported, and the command carries on at the next pass.
//
// The SDK's HTTP handler only logs a warning when `requestTimeout` passes unless `throwOnRequestTimeout`
// is set: both are needed for a deadline.

/** Connecting (TCP and TLS) to an AWS endpoint: a few round trips. */
export const AWS_CONNECT_TIMEOUT_MS = 5_000;
/**
 * One request, answer included. The slowest call is an instant EC2 Fleet, which answers once its
 * instances are requested (seconds); a Pricing page is about 100 KB.
 */
export const AWS_REQUEST_TIMEOUT_MS = 30_000;

/** The client configuration that sets those deadlines (spread into each client's constructor). */
export function awsDeadlines(requestTimeoutMs: number = AWS_REQUEST_TIMEOUT_MS): {
  readonly requestHandler: { connectionTimeout: number; requestTimeout: number; throwOnRequestTimeout: boolean };
} {
  return { requestHandler: { connectionTimeout: Math.min(AWS_CONNECT_TIMEOUT_MS, requestTimeoutMs), requestTimeout: requestTimeoutMs, throwOnRequestTimeout: true } };
}
