//! When to retry and how long to wait (docs/architecture.md, The Databricks client).
//!
//! Retried: 429 and 503 (the service asks to come back later), the few error messages the
//! official SDK also treats as transient, connections that were never made (refused, connect
//! timeout), and for requests that are safe to repeat also 500, 502, 504 and lost answers (a
//! timeout, a reset). Safe to repeat: reads (GET, HEAD, the OAuth token request: nothing
//! changes however often they are sent) and the writes their caller marks so
//! (`Client::idempotent`: an upload with overwrite, `mkdirs`, a delete, a PUT, `reset` or
//! `edit` of a whole object). Everything else is final: a 400 repeated is still a 400, and
//! repeating a create whose answer was lost to a 500 or a timeout risks a duplicate (the
//! engine looks for the object instead).
//!
//! The official SDKs retry 429 and 503 (databricks-sdk-go `apierr/errors.go` `IsRetriable`;
//! databricks-sdk-py `errors/customizer.py`), 504 (Go, `httpclient/errors.go`
//! `DefaultErrorRetriable`), and resets and timeouts for every method, creates included
//! (Go `urlErrorTransientErrorMessages`; Python `_base_client.py` `_is_retryable`), but no
//! 500 ("some API's recommend retries on HTTP 500, but we'll add that later"). Here a create
//! is never sent again after a failure that may have reached the service, and a write that
//! is safe to repeat is, after a 500 or 502 too.

use std::time::Duration;

use rand::Rng;

/// Messages the SDK retries whatever their status (`retries.py` / `_base_client.py`).
const TRANSIENT_MESSAGES: &[&str] = &[
    "Unexpected error",
    "ClusterNotReadyException",
    "Please try again later or try a faster operation.",
    "RPC token bucket limit has been exceeded",
];

/// `repeatable`: the request is safe to send again (a read, or a write marked idempotent).
pub(crate) fn retryable_status(status: u16, message: &str, repeatable: bool) -> bool {
    status == 429
        || status == 503
        || (repeatable && matches!(status, 500 | 502 | 504))
        || TRANSIENT_MESSAGES.iter().any(|m| message.contains(m))
}

/// `Retry-After` in whole seconds. The HTTP-date form is ignored (the caller then uses its own
/// backoff), as in the SDK; an absurd value is capped so one header cannot stall a run.
pub(crate) fn parse_retry_after(value: Option<&str>) -> Option<Duration> {
    let secs: f64 = value?.trim().parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(300.0)))
}

/// The wait before retry number `attempt` (1-based).
///
/// Exponential from 100 ms, capped at 10 s, with "equal jitter" (half fixed, half random) so
/// many clients that failed together do not come back together, while each still waits at
/// least half the step. When the server sent `Retry-After`, that is the floor and a small
/// jitter (up to 20 %, at most 1 s) spreads the returning requests.
pub(crate) fn backoff(attempt: u32, retry_after: Option<Duration>) -> Duration {
    let mut rng = rand::rng();
    if let Some(after) = retry_after {
        let spread = (after.as_secs_f64() * 0.2).min(1.0);
        let jitter = if spread > 0.0 {
            rng.random_range(0.0..spread)
        } else {
            0.0
        };
        return after + Duration::from_secs_f64(jitter);
    }
    let step = (0.1 * 2f64.powi(attempt.saturating_sub(1).min(16) as i32)).min(10.0);
    let half = step / 2.0;
    Duration::from_secs_f64(half + rng.random_range(0.0..half))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses() {
        for repeatable in [false, true] {
            assert!(retryable_status(429, "", repeatable));
            assert!(retryable_status(503, "", repeatable));
            for s in [400, 401, 403, 404, 409] {
                assert!(!retryable_status(s, "boom", repeatable), "{s}");
            }
            assert!(retryable_status(
                500,
                "Unexpected error: try later",
                repeatable
            ));
        }
        for s in [500, 502, 504] {
            assert!(
                !retryable_status(s, "boom", false),
                "a write {s} is not repeated"
            );
            assert!(
                retryable_status(s, "boom", true),
                "a read's or an idempotent write's {s} is"
            );
        }
    }

    #[test]
    fn backoff_grows_and_respects_retry_after() {
        for attempt in 1..20 {
            let b = backoff(attempt, None);
            let step = (0.1 * 2f64.powi((attempt - 1).min(16) as i32)).min(10.0);
            assert!(
                b.as_secs_f64() >= step / 2.0 && b.as_secs_f64() <= step,
                "{attempt}: {b:?}"
            );
        }
        let b = backoff(1, Some(Duration::from_secs(2)));
        assert!(
            b >= Duration::from_secs(2) && b <= Duration::from_millis(2400),
            "{b:?}"
        );
        assert_eq!(parse_retry_after(Some("3")), Some(Duration::from_secs(3)));
        assert_eq!(
            parse_retry_after(Some("Wed, 21 Oct 2015 07:28:00 GMT")),
            None
        );
        assert_eq!(
            parse_retry_after(Some("99999")),
            Some(Duration::from_secs(300))
        );
    }
}
