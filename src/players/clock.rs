//! Time for players: the match clocks, the deadline a player is given, and the ticker that lets a search
//! look at the time often enough to stop before its deadline without reading the clock at every node.
//!
//! GGP matches give every player a *start clock* (time to prepare once) and a *play clock* (time for
//! each move). A player is handed a [`Deadline`]: the play clock less a safety margin. Every player is
//! anytime: it returns the best move it knows when the deadline comes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The default play clock of the command line: long enough to search well, short enough that no
/// command waits long without saying why.
pub const DEFAULT_PLAY_CLOCK: Duration = Duration::from_secs(5);

/// The default start clock of the command line.
pub const DEFAULT_START_CLOCK: Duration = Duration::from_secs(10);

/// The CPU time the calling thread has used, where the system tells it (Unix; `None` elsewhere).
///
/// A rate measured by it is what the work itself costs: another busy process on the machine slows
/// the wall clock's rate (a player probing its game while the opponent loads its own), not this one.
pub fn thread_cpu_time() -> Option<Duration> {
    #[cfg(unix)]
    {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `t` is a valid timespec the call writes into; the clock id is a constant the C
        // library defines.
        let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } == 0;
        ok.then(|| Duration::new(t.tv_sec as u64, t.tv_nsec as u32))
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// A match's clocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    /// Time to prepare, once per match, before the first move.
    pub start: Duration,
    /// Time for each move.
    pub play: Duration,
    /// What a player keeps in hand out of each clock: the time to return, send the reply and be read.
    pub margin: Duration,
}

impl Clock {
    /// Clocks of `start` and `play` with the default margin: a tenth of the play clock, at least 50 ms
    /// (a busy machine can hold a thread back for tens of milliseconds) and at most one second.
    pub fn new(start: Duration, play: Duration) -> Clock {
        Clock {
            start,
            play,
            margin: (play / 10).clamp(Duration::from_millis(50), Duration::from_secs(1)),
        }
    }

    /// The deadline of a move whose clock started at `started`.
    pub fn move_deadline(&self, started: Instant) -> Deadline {
        Deadline::at(started + self.play.saturating_sub(self.margin))
    }

    /// The deadline of the preparation whose clock started at `started`.
    pub fn start_deadline(&self, started: Instant) -> Deadline {
        Deadline::at(started + self.start.saturating_sub(self.margin))
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new(DEFAULT_START_CLOCK, DEFAULT_PLAY_CLOCK)
    }
}

/// The moment by which a player must have returned, and the [`Stop`] that may end its work sooner
/// (a match stopped from the web page, a GGP `abort`).
#[derive(Clone, Copy, Debug)]
pub struct Deadline {
    at: Instant,
    stop: Option<Stop>,
}

impl Deadline {
    /// The deadline `at`.
    pub fn at(at: Instant) -> Deadline {
        Deadline { at, stop: None }
    }

    /// The deadline `budget` from now (a century at most: an `Instant` cannot reach every
    /// `Duration`).
    pub fn after(budget: Duration) -> Deadline {
        const CENTURY: Duration = Duration::from_secs(100 * 365 * 86_400);
        let now = Instant::now();
        Deadline::at(now + budget.min(CENTURY))
    }

    /// The same deadline, passed as soon as `stop` is set too.
    pub fn or_stop(self, stop: Option<Stop>) -> Deadline {
        Deadline {
            stop: stop.or(self.stop),
            ..self
        }
    }

    /// The earlier of this deadline and `at`, stopped as this one is.
    pub fn no_later_than(self, at: Instant) -> Deadline {
        Deadline {
            at: self.at.min(at),
            ..self
        }
    }

    /// When it falls, unless it is stopped first.
    pub fn instant(self) -> Instant {
        self.at
    }

    /// What stops it early, if anything.
    pub fn stop(self) -> Option<Stop> {
        self.stop
    }

    /// Whether it was stopped before its time.
    pub fn stopped(self) -> bool {
        self.stop.is_some_and(Stop::is_set)
    }

    /// The time left (zero once it has passed or was stopped).
    pub fn remaining(self) -> Duration {
        if self.stopped() {
            return Duration::ZERO;
        }
        self.at.saturating_duration_since(Instant::now())
    }

    /// Whether it has passed (or was stopped).
    pub fn passed(self) -> bool {
        Instant::now() >= self.at || self.stopped()
    }
}

/// A flag that ends, before their deadlines, the searches given deadlines that carry it: a
/// [`StopSwitch`]'s, read where a search reads its clock ([`Ticker`], [`Deadline::passed`]).
///
/// It is a plain reference so that a [`Deadline`] stays `Copy`: the flags live for the whole
/// process, and a switch gives its flag back for the next switch when it is dropped (a search still
/// holding the old token is one its match no longer waits for).
#[derive(Clone, Copy)]
pub struct Stop(&'static AtomicBool);

impl Stop {
    /// Whether it is set.
    pub fn is_set(self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

impl std::fmt::Debug for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Stop({})", self.is_set())
    }
}

/// Flags given back by dropped switches, for the next ones: as many exist as switches ever lived
/// at once.
static FREE_FLAGS: Mutex<Vec<&'static AtomicBool>> = Mutex::new(Vec::new());

/// The owner of a [`Stop`]: a match's (or a served player's) way to end its players' work now.
pub struct StopSwitch(&'static AtomicBool);

impl StopSwitch {
    /// A switch not yet set.
    pub fn new() -> StopSwitch {
        let reused = FREE_FLAGS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let flag = reused.unwrap_or_else(|| Box::leak(Box::new(AtomicBool::new(false))));
        flag.store(false, Ordering::Relaxed);
        StopSwitch(flag)
    }

    /// Sets it: every deadline carrying its [`Stop`] has passed.
    pub fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether it is set.
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// The token deadlines carry.
    pub fn token(&self) -> Stop {
        Stop(self.0)
    }
}

impl Default for StopSwitch {
    fn default() -> Self {
        StopSwitch::new()
    }
}

impl std::fmt::Debug for StopSwitch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StopSwitch({})", self.is_set())
    }
}

impl Drop for StopSwitch {
    fn drop(&mut self) {
        FREE_FLAGS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(self.0);
    }
}

/// Decides cheaply, many times a second, whether a search must stop.
///
/// Reading the clock costs about as much as a node of a fast native game, so the ticker reads it every
/// `interval` units of work (nodes, simulations) and tunes the interval so that about a millisecond passes
/// between readings. It stops the search when the time left is less than the longest gap it has seen
/// between two readings: the next stretch of work might take that long, and a move must never be late.
/// A game whose single units are slow (a chess playout on the Datalog evaluator) is read at every unit,
/// and stopped while the slowest unit still fits.
#[derive(Clone, Debug)]
pub struct Ticker {
    deadline: Instant,
    stop: Option<Stop>,
    last: Instant,
    interval: u32,
    count: u32,
    longest_gap: Duration,
    stopped: bool,
    /// Whether the clock has been read once: the first reading comes before any work (a search
    /// ticks before each unit), so its gap says nothing of a unit's cost.
    primed: bool,
}

/// The time a ticker aims to let pass between two readings of the clock.
const TICK: Duration = Duration::from_millis(1);

impl Ticker {
    /// A ticker for `deadline`.
    pub fn new(deadline: Deadline) -> Ticker {
        Ticker {
            deadline: deadline.instant(),
            stop: deadline.stop(),
            last: Instant::now(),
            interval: 1,
            count: 0,
            longest_gap: Duration::ZERO,
            stopped: false,
            primed: false,
        }
    }

    /// Counts one unit of work; true when the search must stop now.
    #[inline]
    pub fn tick(&mut self) -> bool {
        if self.stopped {
            return true;
        }
        self.count += 1;
        if self.count < self.interval {
            return false;
        }
        self.read()
    }

    #[cold]
    fn read(&mut self) -> bool {
        if self.stop.is_some_and(Stop::is_set) {
            self.stopped = true;
            return true;
        }
        let now = Instant::now();
        let gap = now - self.last;
        self.last = now;
        self.count = 0;
        if !self.primed {
            // Doubling the interval here let a chess search run a second simulation of 100 ms
            // unread past the deadline.
            self.primed = true;
            self.stopped = now >= self.deadline;
            return self.stopped;
        }
        self.longest_gap = self.longest_gap.max(gap);
        let before = self.interval;
        if gap < TICK / 2 && self.interval < 1 << 20 {
            self.interval *= 2;
        } else if gap > TICK * 2 && self.interval > 1 {
            self.interval /= 2;
        }
        // The next stretch takes about this one's time per unit times its units, and may be as slow as
        // the slowest seen so far.
        let next = gap * self.interval / before;
        if now + self.longest_gap.max(next) >= self.deadline {
            self.stopped = true;
        }
        self.stopped
    }

    /// Whether the ticker has stopped.
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// Stops it (a search that finished early, or a sibling thread that saw the deadline).
    pub fn stop(&mut self) {
        self.stopped = true;
    }
}

/// Where a long search reports what it is doing: called about once a second with a line such as
/// `mcts: 120,000 simulations, best drop(4) 61%`. The command line prints it on standard error; a
/// library user may log it or ignore it.
pub type Progress = Arc<dyn Fn(&str) + Send + Sync>;

/// Calls a [`Progress`] hook at most once a second, starting one second into the search.
pub(crate) struct ProgressTimer {
    hook: Option<Progress>,
    next: Instant,
}

impl ProgressTimer {
    pub(crate) fn new(hook: Option<Progress>) -> ProgressTimer {
        ProgressTimer {
            hook,
            next: Instant::now() + Duration::from_secs(1),
        }
    }

    /// Calls the hook with `line()` if a second has passed since the last call.
    pub(crate) fn maybe(&mut self, line: impl FnOnce() -> String) {
        if let Some(hook) = &self.hook {
            let now = Instant::now();
            if now >= self.next {
                self.next = now + Duration::from_secs(1);
                hook(&line());
            }
        }
    }
}

/// A seed of its own for each role, derived from the match's seed, so that random players on different
/// sides do not mirror each other (splitmix64's finaliser over the seed and the role).
pub fn role_seed(seed: u64, role: usize) -> u64 {
    let mut z = seed ^ (role as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(unix)]
    fn a_thread_s_cpu_time_counts_its_work_and_not_its_sleep() {
        let before = thread_cpu_time().expect("a Unix thread's CPU clock is readable");
        std::thread::sleep(Duration::from_millis(50));
        let slept = thread_cpu_time().expect("readable").saturating_sub(before);
        assert!(slept < Duration::from_millis(25), "a sleep cost {slept:?}");
        // Work moves it on: this loop ends after 20 ms of this thread's CPU time, however busy the
        // machine is.
        let from = thread_cpu_time().expect("readable");
        let mut spins = 0u64;
        while thread_cpu_time().expect("readable").saturating_sub(from) < Duration::from_millis(20)
        {
            spins = std::hint::black_box(spins + 1);
        }
        assert!(spins > 0);
    }

    #[test]
    fn a_ticker_stops_before_its_deadline() {
        let deadline = Deadline::after(Duration::from_millis(100));
        let mut t = Ticker::new(deadline);
        let mut units = 0u64;
        while !t.tick() {
            units += 1;
            std::hint::black_box(units);
        }
        // The slack is for a busy machine, which may hold this thread back inside the last stretch.
        assert!(Instant::now() <= deadline.instant() + Duration::from_millis(50));
        assert!(units > 1000, "it let the search work: {units} units");
        assert!(t.tick(), "once stopped it stays stopped");
    }

    #[test]
    fn a_stop_passes_a_deadline_and_stops_its_ticker_before_their_time() {
        let switch = StopSwitch::new();
        let deadline = Deadline::after(Duration::from_secs(3600)).or_stop(Some(switch.token()));
        let mut t = Ticker::new(deadline);
        assert!(!t.tick() && !deadline.passed());
        assert!(deadline.remaining() > Duration::from_secs(3000));
        switch.set();
        assert!(deadline.passed() && deadline.remaining() == Duration::ZERO);
        // The ticker sees it at its next reading of the clock, within its interval of units.
        assert!((0..1 << 21).any(|_| t.tick()), "the ticker never stopped");
        // An earlier deadline keeps the stop.
        assert!(deadline
            .no_later_than(Instant::now() + Duration::from_secs(60))
            .passed());
        // A switch made after this one is dropped may reuse its flag: it starts unset.
        drop(switch);
        let next = StopSwitch::new();
        assert!(
            !next.is_set()
                && !Deadline::after(Duration::from_secs(60))
                    .or_stop(Some(next.token()))
                    .passed()
        );
    }

    #[test]
    fn the_first_reading_measures_no_unit() {
        let mut t = Ticker::new(Deadline::after(Duration::from_secs(60)));
        assert!(!t.tick());
        assert_eq!(t.interval, 1, "the unit after the first tick is read too");
        assert_eq!(t.longest_gap, Duration::ZERO);
    }

    #[test]
    fn slow_units_are_read_one_by_one() {
        let deadline = Deadline::after(Duration::from_millis(300));
        let mut t = Ticker::new(deadline);
        let mut units = 0;
        while !t.tick() {
            std::thread::sleep(Duration::from_millis(10));
            units += 1;
        }
        assert_eq!(t.interval, 1, "every slow unit is followed by a reading");
        // Late only by a sleep that overran the longest gap seen before it (a busy machine).
        assert!(
            Instant::now() <= deadline.instant() + Duration::from_millis(50),
            "late"
        );
        assert!(units >= 3, "{units}");
    }

    #[test]
    fn role_seeds_differ_and_repeat() {
        assert_ne!(role_seed(1, 0), role_seed(1, 1));
        assert_eq!(role_seed(7, 2), role_seed(7, 2));
        assert_ne!(role_seed(1, 0), role_seed(2, 0));
    }

    #[test]
    fn the_margin_is_a_tenth_within_bounds() {
        let c = Clock::new(Duration::from_secs(10), Duration::from_secs(2));
        assert_eq!(c.margin, Duration::from_millis(200));
        let c = Clock::new(Duration::from_secs(10), Duration::from_millis(100));
        assert_eq!(c.margin, Duration::from_millis(50));
        let c = Clock::new(Duration::from_secs(10), Duration::from_secs(60));
        assert_eq!(c.margin, Duration::from_secs(1));
    }
}
