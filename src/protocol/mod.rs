//! The GGP protocol's formats (PROTOCOL.md in the shared reference), which the player
//! [server](crate::server) and the [referee](crate::referee)'s remote seats both speak:
//!
//! - [`messages`]: the messages, read leniently and printed as managers send them.
//! - [`record`]: ggp-base's match JSON.

pub mod messages;
pub mod record;

use std::time::Duration;

/// Seconds as a [`Duration`], for clocks read from messages (already checked finite and non-negative).
pub(crate) fn secs(seconds: f64) -> Duration {
    Duration::try_from_secs_f64(seconds).unwrap_or(Duration::ZERO)
}

/// Seconds as a [`Duration`] when they are a sensible time to wait: finite, not negative, at most a day.
pub fn secs_checked(seconds: f64) -> Option<Duration> {
    (seconds.is_finite() && (0.0..=86_400.0).contains(&seconds)).then(|| secs(seconds))
}
