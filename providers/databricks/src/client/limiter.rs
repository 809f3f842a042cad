//! The per-host request-rate limiter.
//!
//! Databricks enforces per-workspace, per-endpoint rate limits that it does not publish and that
//! differ between endpoints and tiers, so a fixed client-side rate is either too slow or still
//! hits 429s. Instead the limiter learns the rate with AIMD, the scheme TCP uses for congestion
//! control, because it converges to a fair share of an unknown capacity without any model of it:
//!
//! - It starts at `initial_rate` requests/s (or the fixed cap, if lower).
//! - Every 429 multiplies the rate by `DECREASE` (0.7): backing off quickly is what stops a
//!   storm of 429s, each of which costs a Retry-After wait.
//! - Only one decrease per congestion event: requests already in flight when the rate dropped
//!   were paced at the old rate, so their 429s say nothing new. Without this guard a burst of
//!   N concurrent 429s would collapse the rate by 0.7^N.
//! - A success is any answer that is not a 429 or a server error: a 404 or a 400 is the
//!   service answering at this rate (a plan asking whether each new name is free hears
//!   little but 404s, and must not stay at the start for it).
//! - Every success that had to wait for its slot adds `INCREASE / rate`, i.e. about `INCREASE`
//!   requests/s per second of saturated traffic. Successes that did not wait prove nothing about
//!   a higher rate (the caller was slower than the limit), so they do not raise it; that keeps an
//!   idle client from drifting to an absurd rate and then 429-storming when work arrives.
//!   The exception is burst credit spent in slow start (below).
//! - Until the first 429 the limiter is in slow start, as TCP is: each success that had to
//!   wait raises the rate by one request per its round trip (`1 / latency` requests/s) or by
//!   25%, whichever is more. As in TCP, where each acknowledgement adds one segment to the
//!   window, the rate then doubles every round trip, however low it starts: growth per
//!   success alone creeps while fewer requests than one per round trip are answered (at 30
//!   req/s and 20 ms, 0.6 a round trip: 30 to 500 req/s took 0.4 s, a fifth of a 500-object
//!   apply). Starting low is safe for a service whose limit is unknown, but additive growth
//!   alone would keep a large apply far below what the service accepts for minutes; slow
//!   start finds the limit in a fraction of a second, and the first 429 hands over to AIMD.
//! - In slow start a success that did not wait but spent burst credit (its slot came from a
//!   bucket that was not full: requests were coming faster than the rate refills it) counts
//!   too, the way TCP counts the acknowledgements of its initial window; otherwise a large
//!   apply spends the burst, then crawls at the starting rate until waiting successes raise
//!   it (a tenth of a 500-object apply). It raises the rate to at most twice the rate in force
//!   when it was sent: a burst the service answered says it took that many requests, not that
//!   it takes any pace, and counted without that bound thirty answered requests from a
//!   same-machine service raised the rate to its ceiling and drew a storm of 429s.
//! - A user-set `rate_limit` is a hard ceiling: the rate never exceeds it, but still adapts
//!   below it.
//!
//! Pacing is a token bucket refilled at `rate`. Without a user cap it holds one second of the
//! starting rate, as token buckets usually do, so a command that makes a few dozen calls (a
//! no-op plan reads a listing per parent) sends them at once instead of spacing them at the
//! starting rate; should that exceed the service's limit, its 429s are what the limiter
//! learns from. With a user cap the bucket holds one token: there is no burst credit, so a
//! fixed cap of R is never exceeded over any window, which is what users who set one want.

use std::sync::Mutex;
use std::time::{Duration, Instant};

const DECREASE: f64 = 0.7;
const INCREASE: f64 = 2.0;
/// Growth per saturated success during slow start (at least; see the module doc).
const SLOW_START_GROWTH: f64 = 1.25;
/// The shortest round trip slow start counts with, so an answer from the same machine does
/// not raise the rate without bound.
const MIN_ROUND_TRIP: Duration = Duration::from_millis(1);
const MIN_RATE: f64 = 0.5;
/// Without a user cap the adaptive rate still stops here, far above any Databricks limit.
const MAX_RATE: f64 = 10_000.0;

#[derive(Debug)]
pub(crate) struct Limiter {
    state: Mutex<State>,
    gate: tokio::sync::Mutex<()>,
    cap: f64,
    /// Tokens the bucket holds at most.
    capacity: f64,
}

#[derive(Debug)]
struct State {
    rate: f64,
    tokens: f64,
    refilled: Instant,
    last_decrease: Option<Instant>,
    /// No 429 seen yet.
    slow_start: bool,
}

/// What `acquire` hands back, to report the outcome against.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Permit {
    sent_at: Instant,
    waited: bool,
    /// Taken from a bucket that was not full: the caller is sending faster than the rate.
    drained: bool,
    /// The rate in force when the slot was granted.
    rate: f64,
}

impl Limiter {
    pub(crate) fn new(initial_rate: f64, fixed_cap: Option<f64>) -> Limiter {
        let fixed = fixed_cap.filter(|c| c.is_finite() && *c > 0.0);
        let cap = fixed.unwrap_or(MAX_RATE);
        let initial = if initial_rate.is_finite() && initial_rate > 0.0 {
            initial_rate
        } else {
            30.0
        };
        let capacity = if fixed.is_some() {
            1.0
        } else {
            initial.max(1.0)
        };
        Limiter {
            state: Mutex::new(State {
                rate: initial.min(cap).max(MIN_RATE.min(cap)),
                tokens: capacity,
                refilled: Instant::now(),
                last_decrease: None,
                slow_start: true,
            }),
            gate: tokio::sync::Mutex::new(()),
            cap,
            capacity,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state is two numbers and an instant, each always valid on its own.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Waits for this request's slot.
    ///
    /// Callers queue on a fair (FIFO) async gate and only the head of the queue sleeps on the
    /// clock. Slots are therefore never reserved ahead of time: a rate change from a 429 applies
    /// at once to everyone still queued, instead of after hundreds of pre-booked slots at the
    /// old rate have been spent (which would draw more 429s and collapse the rate).
    pub(crate) async fn acquire(&self) -> Permit {
        let _gate = self.gate.lock().await;
        let mut waited = false;
        loop {
            let until = {
                let mut s = self.lock();
                let now = Instant::now();
                let elapsed = now.duration_since(s.refilled).as_secs_f64();
                s.tokens = (s.tokens + elapsed * s.rate).min(self.capacity);
                s.refilled = now;
                if s.tokens >= 1.0 {
                    let drained = s.tokens < self.capacity;
                    s.tokens -= 1.0;
                    return Permit {
                        sent_at: now,
                        waited,
                        drained,
                        rate: s.rate,
                    };
                }
                now + Duration::from_secs_f64((1.0 - s.tokens) / s.rate)
            };
            waited = true;
            // Re-checked after waking: a 429 meanwhile may have emptied the bucket.
            tokio::time::sleep_until(until.into()).await;
        }
    }

    pub(crate) fn on_success(&self, permit: Permit) {
        let mut s = self.lock();
        let burst = s.slow_start && permit.drained && !permit.waited;
        if !(permit.waited || burst) {
            return;
        }
        let round_trip = permit.sent_at.elapsed().max(MIN_ROUND_TRIP).as_secs_f64();
        let grown = if s.slow_start {
            (s.rate * SLOW_START_GROWTH).max(s.rate + 1.0 / round_trip)
        } else {
            s.rate + INCREASE / s.rate
        };
        let grown = if burst {
            grown.min(s.rate.max(2.0 * permit.rate))
        } else {
            grown
        };
        s.rate = grown.min(self.cap);
    }

    pub(crate) fn on_throttled(&self, permit: Permit) {
        let mut s = self.lock();
        if s.last_decrease.is_some_and(|d| permit.sent_at <= d) {
            return;
        }
        s.rate = (s.rate * DECREASE).max(MIN_RATE.min(self.cap));
        s.last_decrease = Some(Instant::now());
        s.slow_start = false;
        // The server is over its limit right now: drop any burst credit and leave one interval
        // at the new rate before the next request, so its bucket can refill a little.
        s.tokens = s.tokens.min(0.0) - 1.0;
    }

    pub(crate) fn rate(&self) -> f64 {
        self.lock().rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn one_decrease_per_congestion_event_and_cap() {
        let l = Limiter::new(100.0, Some(40.0));
        assert_eq!(l.rate(), 40.0);
        let permits = [l.acquire().await, l.acquire().await, l.acquire().await];
        for p in permits {
            l.on_throttled(p);
        }
        assert!((l.rate() - 28.0).abs() < 1e-9, "{}", l.rate());
        let p = l.acquire().await;
        l.on_throttled(p);
        assert!((l.rate() - 19.6).abs() < 1e-9, "{}", l.rate());
        for _ in 0..1000 {
            let p = l.acquire_for_test();
            l.on_success(p);
        }
        assert_eq!(l.rate(), 40.0, "never above the fixed cap");
    }

    impl Limiter {
        fn acquire_for_test(&self) -> Permit {
            Permit {
                sent_at: Instant::now(),
                waited: true,
                drained: true,
                rate: self.rate(),
            }
        }
    }

    #[tokio::test]
    async fn slow_start_doubles_quickly_until_the_first_429() {
        let l = Limiter::new(30.0, None);
        for _ in 0..15 {
            l.on_success(l.acquire_for_test());
        }
        assert!(
            l.rate() > 60.0,
            "doubled in 15 saturated requests: {}",
            l.rate()
        );
        let p = l.acquire().await;
        l.on_throttled(p);
        let after_429 = l.rate();
        for _ in 0..15 {
            l.on_success(l.acquire_for_test());
        }
        assert!(
            l.rate() - after_429 < 1.0,
            "additive after a 429: {} -> {}",
            after_429,
            l.rate()
        );
    }

    /// At 30 req/s and 20 ms a round trip, fewer than one answer comes back per round
    /// trip: slow start still doubles the rate each round trip, as TCP's does.
    #[tokio::test]
    async fn slow_start_doubles_per_round_trip_at_a_low_rate() {
        let l = Limiter::new(30.0, None);
        let answered = Permit {
            sent_at: Instant::now() - Duration::from_millis(20),
            waited: true,
            drained: true,
            rate: 30.0,
        };
        l.on_success(answered);
        assert!(l.rate() > 75.0, "30 + about one per 20 ms: {}", l.rate());
    }

    #[tokio::test]
    async fn paces_requests_after_a_burst() {
        let l = Limiter::new(100.0, None);
        let start = Instant::now();
        for _ in 0..100 {
            l.acquire().await;
        }
        assert!(
            start.elapsed() < Duration::from_millis(50),
            "a second's worth of the starting rate goes at once"
        );
        for _ in 0..11 {
            l.acquire().await;
        }
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(95), "{took:?}");
    }

    #[tokio::test]
    async fn a_fixed_cap_grants_no_burst() {
        let l = Limiter::new(100.0, Some(100.0));
        let start = Instant::now();
        for _ in 0..11 {
            l.acquire().await;
        }
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(95), "{took:?}");
    }

    /// Burst credit spent in slow start raises the rate, at most to twice the rate it was
    /// sent at; the first request from a full bucket is an idle client's and proves nothing;
    /// after a 429 only waiting successes raise it.
    #[tokio::test]
    async fn a_burst_answered_in_slow_start_doubles_the_rate_at_most() {
        let l = Limiter::new(30.0, None);
        let first = l.acquire().await;
        assert!(!first.drained && !first.waited, "{first:?}");
        l.on_success(first);
        assert_eq!(l.rate(), 30.0, "one request from a full bucket");
        let burst: Vec<Permit> = {
            let mut v = Vec::new();
            for _ in 0..20 {
                v.push(l.acquire().await);
            }
            v
        };
        assert!(burst.iter().all(|p| p.drained && !p.waited), "{burst:?}");
        for p in burst {
            l.on_success(p);
        }
        assert_eq!(l.rate(), 60.0, "twice the rate the burst was sent at");
        let next = l.acquire().await;
        l.on_success(next);
        assert!(l.rate() > 60.0 && l.rate() <= 120.0, "{}", l.rate());

        let l = Limiter::new(30.0, None);
        l.acquire().await;
        l.on_throttled(l.acquire().await);
        let after_429 = l.rate();
        for _ in 0..10 {
            let p = Permit {
                sent_at: Instant::now(),
                waited: false,
                drained: true,
                rate: after_429,
            };
            l.on_success(p);
        }
        assert_eq!(
            l.rate(),
            after_429,
            "no growth from burst credit after a 429"
        );
    }
}
