//! Mutation fuzzing of the whole pipeline: small corpus games, mutated deterministically (a fixed seed),
//! go through every stage — parse, check, lowering, the operation rewrite, the engine's rewrites,
//! grounding, both engines built — and then a few random playouts on both engines with the same moves.
//!
//! It fails when
//! - any stage panics (the panic is caught and the mutant reported),
//! - one mutant takes longer than [`MUTANT_LIMIT`] (a hang: the evaluator's deadline and the grounding
//!   budget, both small here, should stop every mutant long before),
//! - both engines accept a mutant that `check` finds no error in, and they disagree on the roles, the state's facts, terminal, goals or legal
//!   moves at some step of the same move sequence,
//! - the network refuses a mutant as invalid that the Datalog evaluator accepts and `check` finds no
//!   problem with, not even a warning (both engines read the same rewritten program, so they accept the
//!   same games; a refusal for budget, recursion or an unsupported feature is not a disagreement),
//! - too few mutants reach play on both engines (so the fuzz cannot pass vacuously).
//!
//! A failure prints the mutated program, the mutations, the seed and the mutant's number; rerun one with
//! `GGP_FUZZ_ONLY=N` (and `GGP_FUZZ_SEED` if it was not the default). `GGP_FUZZ_CASES` and
//! `GGP_FUZZ_SECONDS` change how many mutants and how long (default: [`CASES`] mutants, stopping early
//! after [`SECONDS`] s; 23-31 s in a release build on the loaded 2-core development machine).
//!
//! Regression cases found by the fuzz live in `fuzz_regressions` below.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ggp::engine::{lower, ops::to_classic, rewrite::prepare, Limits, RuleGame};
use ggp::game::Game;
use ggp::network::{ground_with, Budget, NetGame, NetworkError};
use ggp::syntax::parse_kif;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

mod common;
use common::shared;

/// The corpus games mutated: small ones (up to about 3.7 KB), which load in milliseconds, so that many
/// mutants fit in the time; between them they cover turns, simultaneous moves, one to four roles,
/// arithmetic tables, `distinct`, negation, recursion and ggp-base's odd test cases.
const GAMES: &[&str] = &[
    "ggpbase_test_case_1a",
    "ggpbase_test_case_1b",
    "ggpbase_test_case_2a",
    "ggpbase_test_case_2b",
    "ggpbase_test_case_2c",
    "ggpbase_test_case_3b",
    "ggpbase_test_case_3c",
    "ggpbase_test_case_3d",
    "ggpbase_test_case_3e",
    "ggpbase_test_case_3f",
    "ggpbase_test_case_4a",
    "ggpbase_test_case_5a",
    "ggpbase_test_case_5b",
    "ggpbase_test_case_5c",
    "ggpbase_test_case_5d",
    "ggpbase_test_case_5e",
    "ggpbase_test_clean_not_distinct",
    "ggpbase_test_distinct_beginning_rule",
    "ggpbase_simpleMutex",
    "nim1",
    "roshambo2",
    "coins",
    "blocker",
    "blocks",
    "smallest_4player",
    "blocksWorld",
    "hanoi",
    "buttons",
    "numbertictactoe",
    "point_grab",
    "lightsOut",
    "stateSpaceSmall",
    "simultaneousWin2",
    "chickentictactoe",
    "maze",
    "lightsOn",
    "tictactoe-init1",
    "circlesolitaire",
    "chomp",
    "ticTacToe",
    "eightPuzzle",
    "conn4",
    "knightThrough",
    "guess",
    "duplicateStateSmall",
];

/// How many mutants by default.
const CASES: usize = 4000;
/// ...and the time after which no new mutant starts.
const SECONDS: u64 = 45;
/// The default seed.
const SEED: u64 = 0x5eed_0021;
/// The longest one mutant may take (load and play on both engines) before the test calls it a hang.
const MUTANT_LIMIT: Duration = Duration::from_secs(30);
/// Playouts per mutant, and the most steps of each.
const PLAYOUTS: usize = 3;
const STEPS: usize = 12;

fn env_num(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

// ---------------------------------------------------------------------------------------------------
// Mutation

/// KIF tokens: parentheses and atoms (comments dropped).
fn tokens(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in src.lines() {
        let line = line.split(';').next().unwrap_or("");
        let mut atom = String::new();
        for c in line.chars() {
            if c == '(' || c == ')' || c.is_whitespace() {
                if !atom.is_empty() {
                    out.push(std::mem::take(&mut atom));
                }
                if !c.is_whitespace() {
                    out.push(c.to_string());
                }
            } else {
                atom.push(c);
            }
        }
        if !atom.is_empty() {
            out.push(atom);
        }
    }
    out
}

/// The token ranges of the forms at `depth` (0: top-level statements; 1: a rule's head and literals).
fn forms(t: &[String], depth: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut d = 0usize;
    let mut start = 0;
    for (i, tok) in t.iter().enumerate() {
        match tok.as_str() {
            "(" => {
                if d == depth {
                    start = i;
                }
                d += 1;
            }
            ")" => {
                d = d.saturating_sub(1);
                if d == depth {
                    out.push((start, i + 1));
                }
            }
            _ if d == depth => out.push((i, i + 1)),
            _ => {}
        }
    }
    out
}

fn is_atom(t: &str) -> bool {
    t != "(" && t != ")"
}

/// One random mutation of `t`, described.
fn mutate(t: &mut Vec<String>, rng: &mut SmallRng) -> String {
    if t.is_empty() {
        t.push("(role r)".into());
        return "empty: added a role".into();
    }
    let atoms: Vec<usize> = (0..t.len()).filter(|&i| is_atom(&t[i])).collect();
    let pick = |rng: &mut SmallRng, v: &[usize]| v[rng.gen_range(0..v.len())];
    match rng.gen_range(0..11) {
        0 => {
            let i = rng.gen_range(0..t.len());
            format!("deleted token {i} `{}`", t.remove(i))
        }
        1 => {
            let i = rng.gen_range(0..t.len());
            t.insert(i, t[i].clone());
            format!("duplicated token {i} `{}`", t[i])
        }
        2 if !atoms.is_empty() => {
            let (i, j) = (pick(rng, &atoms), pick(rng, &atoms));
            t.swap(i, j);
            format!("swapped tokens {i} `{}` and {j} `{}`", t[j], t[i])
        }
        3..=5 => {
            let f = forms(t, 0);
            if f.is_empty() {
                return "no form".into();
            }
            let (a, b) = f[rng.gen_range(0..f.len())];
            let form: Vec<String> = t[a..b].to_vec();
            let text = form.join(" ");
            match rng.gen_range(0..3) {
                0 => {
                    t.drain(a..b);
                    format!("deleted statement `{text}`")
                }
                1 => {
                    let (c, _) = f[rng.gen_range(0..f.len())];
                    let at = if c > a { c.max(b) } else { c };
                    t.splice(at..at, form);
                    format!("duplicated statement `{text}` at token {at}")
                }
                _ => {
                    // Moved to the end: the order of statements must not matter.
                    t.drain(a..b);
                    t.extend(form);
                    format!("moved statement `{text}` to the end")
                }
            }
        }
        6..=7 => {
            // A literal of a rule deleted, or negated.
            let rules: Vec<(usize, usize)> = forms(t, 0)
                .into_iter()
                .filter(|&(a, b)| b - a > 3 && t[a + 1] == "<=")
                .collect();
            if rules.is_empty() {
                return "no rule".into();
            }
            let (a, b) = rules[rng.gen_range(0..rules.len())];
            let lits: Vec<(usize, usize)> = forms(&t[a..b], 1)
                .into_iter()
                .skip(2) // `<=` and the head
                .map(|(x, y)| (a + x, a + y))
                .collect();
            if lits.is_empty() {
                return "no literal".into();
            }
            let (x, y) = lits[rng.gen_range(0..lits.len())];
            let text = t[x..y].join(" ");
            if rng.gen_bool(0.5) {
                t.drain(x..y);
                format!("deleted literal `{text}`")
            } else {
                t.insert(y, ")".into());
                t.insert(x, "not".into());
                t.insert(x, "(".into());
                format!("negated literal `{text}`")
            }
        }
        8 if !atoms.is_empty() => {
            // A constant or variable replaced by another from the file.
            let (i, j) = (pick(rng, &atoms), pick(rng, &atoms));
            let new = t[j].clone();
            let old = std::mem::replace(&mut t[i], new);
            format!("token {i} `{old}` became `{}`", t[i])
        }
        9 if !atoms.is_empty() => {
            // A variable made fresh, a constant made a variable, or a variable made a constant.
            let i = pick(rng, &atoms);
            let new = if t[i].starts_with('?') {
                if rng.gen_bool(0.5) {
                    "?fresh".to_string()
                } else {
                    "zz".to_string()
                }
            } else {
                format!("?{}", t[i].to_lowercase())
            };
            let old = std::mem::replace(&mut t[i], new);
            format!("token {i} `{old}` became `{}`", t[i])
        }
        _ => {
            // A number changed (goal values, counters, arithmetic tables).
            let nums: Vec<usize> = atoms
                .iter()
                .copied()
                .filter(|&i| t[i].parse::<i64>().is_ok())
                .collect();
            if nums.is_empty() {
                return "no number".into();
            }
            let i = pick(rng, &nums);
            let n: i64 = t[i].parse().unwrap();
            let new = match rng.gen_range(0..4) {
                0 => n + 1,
                1 => n - 1,
                2 => 100 - n,
                _ => n * 2 + 1,
            };
            let old = std::mem::replace(&mut t[i], new.to_string());
            format!("token {i} `{old}` became `{}`", t[i])
        }
    }
}

/// Prints tokens as KIF, one top-level statement a line.
fn print(t: &[String]) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    for tok in t {
        match tok.as_str() {
            "(" => {
                if !out.is_empty() && !out.ends_with(['(', '\n']) {
                    out.push(' ');
                }
                out.push('(');
                depth += 1;
            }
            ")" => {
                out.push(')');
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    out.push('\n');
                }
            }
            a => {
                if !out.is_empty() && !out.ends_with(['(', '\n']) {
                    out.push(' ');
                }
                out.push_str(a);
                if depth == 0 {
                    out.push('\n');
                }
            }
        }
    }
    out
}

/// Mutant number `n` of the run seeded `seed`: a game and one to three mutations.
fn mutant(sources: &[(String, Vec<String>)], seed: u64, n: usize) -> Mutant {
    let mut rng = SmallRng::seed_from_u64(seed ^ (n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let (game, toks) = &sources[n % sources.len()];
    let mut t = toks.clone();
    let count = rng.gen_range(1..=3);
    let how = (0..count).map(|_| mutate(&mut t, &mut rng)).collect();
    Mutant {
        n,
        game: game.clone(),
        how,
        text: print(&t),
        seed: rng.gen(),
    }
}

struct Mutant {
    n: usize,
    game: String,
    how: Vec<String>,
    text: String,
    /// The playouts' seed.
    seed: u64,
}

impl std::fmt::Display for Mutant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "mutant {} of {} ({}), rerun with GGP_FUZZ_ONLY={}:",
            self.n,
            self.game,
            self.how.join("; "),
            self.n
        )?;
        write!(f, "{}", self.text)
    }
}

// ---------------------------------------------------------------------------------------------------
// Driving the stages

/// How far a mutant got.
#[derive(Default, Debug)]
struct Reach {
    parsed: bool,
    checked_ok: bool,
    lowered: bool,
    datalog: bool,
    network: bool,
    /// Played on both engines and compared (both accept it and `check` finds no error).
    compared: bool,
    /// Joint moves compared on both engines.
    steps: usize,
}

/// The grounding budget: small, so a blow-up is a quick refusal.
fn budget() -> Budget {
    Budget {
        max_instances: 200_000,
        max_gates: 200_000,
        max_time: Duration::from_secs(2),
        max_analysis_facts: 200_000,
    }
}

/// Every stage on `text`, then playouts on both engines if both accept it. `Err` is a disagreement.
fn drive(text: &str, seed: u64) -> Result<Reach, String> {
    let mut reach = Reach::default();
    let Ok(p) = parse_kif(text) else {
        return Ok(reach);
    };
    reach.parsed = true;
    let report = ggp::check::check(&p);
    reach.checked_ok = report.is_ok();
    let spotless = report.errors.is_empty() && report.warnings.is_empty();
    if let Ok(ir) = lower(&p) {
        reach.lowered = true;
        if let Ok(mut classic) = to_classic(&ir) {
            prepare(&mut classic);
        }
    }
    // The evaluator's deadline covers loading and every later evaluation, so play stops with it too.
    let limits = Limits {
        max_facts: 200_000,
        max_depth: 50,
        deadline: Some(Instant::now() + Duration::from_secs(4)),
    };
    let rule = RuleGame::with_limits(&p, "mutant", limits);
    let net = ground_with(&p, budget()).and_then(|g| NetGame::from_grounded(g, "mutant"));
    reach.datalog = rule.is_ok();
    reach.network = net.is_ok();
    let (rule, net) = match (rule, net) {
        (Ok(r), Ok(n)) => (r, n),
        // Where `check` finds a problem (an unsafe rule, no `legal` rule), the engines may differ on
        // whether to play the game anyway (issue 21: such games should be errors of `check`).
        (Ok(_), Err(e @ NetworkError::Engine(_))) if spotless => {
            return Err(format!(
                "the network refuses what Datalog loads, and `check` finds no problem: {e}"
            ))
        }
        _ => return Ok(reach),
    };
    // A game `check` rejects (`legal` or `goal` reading `does`, say) has no meaning the engines must
    // share: its stages ran without panicking, and that is all that is asked of it.
    if !report.errors.is_empty() {
        return Ok(reach);
    }
    reach.compared = true;
    if rule.info().roles != net.info().roles {
        return Err(format!(
            "roles: datalog {:?}, network {:?}",
            rule.info().roles,
            net.info().roles
        ));
    }
    let roles = rule.info().roles.len();
    let mut rng = SmallRng::seed_from_u64(seed);
    let (mut rbuf, mut nbuf) = (Vec::new(), Vec::new());
    for playout in 0..PLAYOUTS {
        let (mut rs, mut ns) = (rule.initial_state(), net.initial_state());
        'playout: for step in 0..=STEPS {
            let at = format!("playout {playout}, step {step}");
            let (rf, nf) = (rule.state_facts(&rs), net.state_facts(&ns));
            if rf != nf {
                return Err(format!("{at}: state: datalog {rf:?}, network {nf:?}"));
            }
            // A Datalog error (a runaway, its deadline, a fact the analysis did not foresee) ends the
            // playout: the network cannot say the same.
            let Ok(terminal) = rule.try_terminal(&rs) else {
                break;
            };
            if terminal != net.is_terminal(&ns) {
                return Err(format!(
                    "{at}: terminal: datalog {terminal}, network {}",
                    !terminal
                ));
            }
            for r in 0..roles {
                let Ok(rg) = rule.goal_values(&rs, r) else {
                    break 'playout;
                };
                let ng = net.goal_values(&ns, r);
                if rg != ng {
                    return Err(format!(
                        "{at}: goals of role {r}: datalog {rg:?}, network {ng:?}"
                    ));
                }
            }
            if terminal || step == STEPS {
                break;
            }
            let (mut rj, mut nj) = (Vec::new(), Vec::new());
            for r in 0..roles {
                if rule.try_legal(&rs, r, &mut rbuf).is_err() {
                    break 'playout;
                }
                net.legal_moves(&ns, r, &mut nbuf);
                let rt: Vec<&str> = rbuf.iter().map(|m| rule.move_kif(*m)).collect();
                let nt: Vec<&str> = nbuf.iter().map(|m| net.move_kif(*m)).collect();
                if rt != nt {
                    return Err(format!(
                        "{at}: legal moves of role {r}: datalog {rt:?}, network {nt:?}"
                    ));
                }
                if rbuf.is_empty() {
                    break 'playout;
                }
                let i = rng.gen_range(0..rbuf.len());
                rj.push(rbuf[i]);
                nj.push(nbuf[i]);
            }
            let Ok(next) = rule.try_next(&rs, &rj) else {
                break;
            };
            rs = next;
            ns = net.next_state(&ns, &nj);
            reach.steps += 1;
        }
    }
    Ok(reach)
}

/// [`drive`] with a panic turned into an error naming it.
fn drive_caught(text: &str, seed: u64) -> Result<Reach, String> {
    std::panic::catch_unwind(AssertUnwindSafe(|| drive(text, seed))).unwrap_or_else(|panic| {
        let msg = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".into());
        Err(format!("panicked: {msg}"))
    })
}

#[test]
fn mutated_corpus_games_pass_every_stage_and_the_engines_agree() {
    let seed = env_num("GGP_FUZZ_SEED").unwrap_or(SEED);
    let cases = env_num("GGP_FUZZ_CASES").map_or(CASES, |n| n as usize);
    let seconds = Duration::from_secs(env_num("GGP_FUZZ_SECONDS").unwrap_or(SECONDS));
    let only = env_num("GGP_FUZZ_ONLY").map(|n| n as usize);
    let kif = shared().join("games/kif");
    let sources: Vec<(String, Vec<String>)> = GAMES
        .iter()
        .map(|g| {
            let path = kif.join(format!("{g}.kif"));
            let src = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (g.to_string(), tokens(&src))
        })
        .collect();
    let sources = Arc::new(sources);
    // The mutant being driven, for the watchdog to print.
    let current: Arc<Mutex<Option<String>>> = Arc::default();
    let (tx, rx) = mpsc::channel();
    let started = Instant::now();
    {
        let (sources, current) = (sources.clone(), current.clone());
        // Detached on purpose: if a mutant hangs, the watchdog fails the test without waiting for it.
        std::thread::spawn(move || {
            let numbers: Box<dyn Iterator<Item = usize>> = match only {
                Some(n) => Box::new(std::iter::once(n)),
                None => Box::new(0..cases),
            };
            for n in numbers {
                if only.is_none() && started.elapsed() > seconds {
                    break;
                }
                let m = mutant(&sources, seed, n);
                *current.lock().unwrap_or_else(|p| p.into_inner()) = Some(m.to_string());
                let t = Instant::now();
                let result = drive_caught(&m.text, m.seed);
                if tx.send((m, result, t.elapsed())).is_err() {
                    break;
                }
            }
        });
    }
    let (mut total, mut parsed, mut checked, mut lowered, mut both, mut steps) = (0, 0, 0, 0, 0, 0);
    let (mut datalog_only, mut network_only, mut compared) = (0, 0, 0);
    let mut slowest = (Duration::ZERO, String::new());
    let mut failures = Vec::new();
    loop {
        match rx.recv_timeout(MUTANT_LIMIT) {
            Ok((m, result, took)) => {
                total += 1;
                if took > slowest.0 {
                    slowest = (took, format!("mutant {} of {}", m.n, m.game));
                }
                match result {
                    Ok(r) => {
                        parsed += usize::from(r.parsed);
                        checked += usize::from(r.checked_ok);
                        lowered += usize::from(r.lowered);
                        both += usize::from(r.datalog && r.network);
                        compared += usize::from(r.compared);
                        datalog_only += usize::from(r.datalog && !r.network);
                        network_only += usize::from(!r.datalog && r.network);
                        steps += r.steps;
                    }
                    Err(why) => {
                        println!("FAILED: {why}\n{m}");
                        failures.push(format!("{why}\n{m}"));
                    }
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let m = current.lock().unwrap_or_else(|p| p.into_inner()).clone();
                panic!(
                    "a mutant ran longer than {} s (a hang past the limits):\n{}",
                    MUTANT_LIMIT.as_secs(),
                    m.unwrap_or_default()
                );
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    println!(
        "seed {seed:#x}: {total} mutants in {:.1} s: {parsed} parsed, {checked} valid by `check`, \
         {lowered} lowered, {both} loaded on both engines ({datalog_only} on Datalog only, \
         {network_only} on the network only), {compared} compared in play ({steps} joint moves); slowest {} ms ({})",
        started.elapsed().as_secs_f64(),
        slowest.0.as_millis(),
        slowest.1
    );
    assert!(
        failures.is_empty(),
        "{} of {total} mutants failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    if only.is_none() {
        // Not vacuous: most mutants must get through to play on both engines.
        assert!(total >= 100, "only {total} mutants ran in the time");
        assert!(
            both * 3 >= total,
            "only {both} of {total} mutants loaded on both engines"
        );
        assert!(
            steps >= total,
            "only {steps} joint moves compared for {total} mutants"
        );
    }
}

/// Mutants the fuzz once failed on, replayed on every run.
#[test]
fn fuzz_regressions() {
    // (what broke, the program, whether it is a game both engines must play alike)
    let cases: &[(&str, &str, bool)] = &[
        (
            // Lowering made a relation for `(not (not ...))` and looked its name up in the source's
            // symbol table, which does not have it: an index out of bounds.
            "a doubly negated condition",
            "(role r) (init (s 0)) (<= (legal r go) (not (not (true (s 0)))))\n\
             (<= (legal r wait) (not (true (s 0)))) (<= (next (s 1)) (true (s 0)))\n\
             (<= (next (s 2)) (true (s 1))) (<= terminal (true (s 2))) (goal r 100)",
            true,
        ),
        (
            // ...and lowered `(not (not x))` to a relation `__not1(?x) :- ~x`, whose variable nothing
            // binds: the network refused the game as unsafe, the Datalog evaluator played it.
            "a doubly negated condition with a variable",
            "(role r) (init (s 0)) (n 0) (n 1) (n 2) (succ 0 1) (succ 1 2)\n\
             (<= (legal r (go ?x)) (n ?x) (not (not (true (s ?x)))))\n\
             (<= (next (s ?y)) (does r (go ?x)) (succ ?x ?y))\n\
             (<= terminal (true (s 2))) (goal r 100)",
            true,
        ),
        (
            // Splitting a negation out of a recursive component (`rewrite::prepare`) numbered its
            // relations' components before making new ones, then read the component of a new one:
            // an index out of bounds. (Seed 12, mutant 5866 of ggpbase_test_clean_not_distinct; an
            // invalid game, which must still be refused without a panic.)
            "a split negation read by another split negation's source",
            "(role player) (domain 1) (domain 2) (domain 3) (c 2)\n\
             (<= a (not (distinct p p)))\n\
             (<= (b ?x) (c ?y) (domain ?x) (not (distinct ?x ?y)))\n\
             (<= (d 3) (c ?y) (not (goal 3 ?y)))\n\
             (<= (d 3) (c ?y) (not (distinct ?y 3)))\n\
             (<= (e 3) (c ?y) (not (distinct 2 ?y)))\n\
             (<= (f 3) (c ?y) (not (distinct ?y 2)))\n\
             (<= z (not (distinct p ?q)))\n\
             (<= success a (not (b 1)) (b 2) (not (d 3)) (e 3) (f 3) (not z))\n\
             (<= (goal player 100) success)\n\
             (<= (distinct player 0) (not success))\n\
             (legal player proceed)\n\
             (<= (next done) (does player proceed))\n\
             (<= terminal (true done))",
            false,
        ),
    ];
    for (what, text, plays) in cases {
        match drive_caught(text, 1) {
            Ok(r) => assert!(
                r.lowered && (!plays || (r.compared && r.steps > 0)),
                "{what}: does not get as far as it should ({r:?})\n{text}"
            ),
            Err(why) => panic!("{what}: {why}\n{text}"),
        }
    }
}

#[test]
fn the_mutator_reads_and_prints_kif_faithfully() {
    // Printing the unmutated tokens gives back the same program, so mutants differ only by mutation.
    let src = std::fs::read_to_string(shared().join("games/kif/ticTacToe.kif")).unwrap();
    let p = parse_kif(&src).unwrap();
    let back = parse_kif(&print(&tokens(&src))).unwrap();
    assert!(
        p.statements == back.statements,
        "the token printer changes the program"
    );
    // And the harness sees a disagreement: a program whose engines agree passes, a panic is reported.
    assert!(drive_caught(&src, 1).unwrap().steps > 0);
    let caught = drive_caught("(role", 1).map(|r| r.parsed);
    assert_eq!(caught, Ok(false));
}
