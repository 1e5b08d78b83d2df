//! Ctrl-C during long work (`train`, `tournament`): the first interrupt asks the work to end at its next
//! check and keep what it has done (the scores learned so far, the games played); a second one ends the
//! process at once, as Ctrl-C does everywhere else.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the first interrupt after [`catch`].
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// From now on, the first Ctrl-C (SIGINT) only sets [`interrupted`]; the handler then gives way to the
/// default, so that a second one ends the process.
pub fn catch() {
    #[cfg(unix)]
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe; `SA_RESETHAND` puts
    // the default action back before it runs, so nothing else needs doing inside it.
    unsafe {
        extern "C" fn on_interrupt(_: libc::c_int) {
            INTERRUPTED.store(true, Ordering::SeqCst);
        }
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_interrupt as extern "C" fn(libc::c_int) as libc::sighandler_t;
        action.sa_flags = libc::SA_RESETHAND | libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
    }
}

/// Whether Ctrl-C was pressed since [`catch`].
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// The exit status of a command that stopped on Ctrl-C, as a shell reports a process ended by SIGINT.
pub const EXIT_STATUS: u8 = 130;
