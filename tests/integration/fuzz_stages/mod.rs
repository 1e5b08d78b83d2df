//! Mutation fuzzing of the whole pipeline: small games, mutated deterministically (a fixed seed), go
//! through every stage — parse, check, lowering, the operation rewrite, the engine's rewrites,
//! grounding, both engines built — and then a few random playouts on both engines with the same moves.
//!
//! Both front ends are fuzzed, each with its own lexer, grammar and lowering paths. Most mutants are of
//! small KIF corpus games ([`GAMES`]), cut into parentheses and atoms. Every [`INFIX_EVERY`]th mutant is
//! of an infix game instead: the bundled `games/*.gdl` ([`INFIX_GAMES`]: operation rules, arithmetic
//! built-ins, turns by `control`) and a few corpus games the converter translated ([`CONVERTED_GAMES`]:
//! classic rules in infix), cut into tokens as the infix lexer cuts them. The mutations are alike in
//! both syntaxes: tokens deleted, duplicated, swapped or replaced by others of the file; statements
//! deleted, duplicated or moved to the end; a rule's literal deleted or negated; variables made fresh
//! or constants, constants made variables; numbers changed. Infix adds operators changed (`&` for `|`,
//! `:-` for `::`, ...), where the grammar's precedence decides what KIF's parentheses spell out. Infix
//! statements need no terminator, so the mutator finds where one starts as the grammar does: at a name
//! outside parentheses right after a literal ends (`the_mutator_reads_and_prints_infix_faithfully`
//! holds it to the parser's count).
//!
//! It fails when
//! - any stage panics (the panic is caught and the mutant reported),
//! - one mutant takes longer than [`MUTANT_LIMIT`] (a hang: the evaluator's deadline and the grounding
//!   budget, both small here, should stop every mutant long before),
//! - both engines accept a mutant that `check` finds no error in, and they disagree on the roles, the
//!   state's facts, terminal, goals, legal moves or the role in control at some step of the same move
//!   sequence (the network answering by propagation in one playout, by full passes in the next), or
//!   on the decisive move of the role in control (the network tries its moves at once), or where 64
//!   lanes played at once end a step,
//! - the network's playout paths (a full pass, propagation with each way of playing a step, a guided
//!   playout on its own loop) end a playout of the same random draws elsewhere than the trait's move
//!   methods or the Datalog evaluator drawing the same way ([`fast_paths_agree`]),
//! - `check`'s play-test (random matches looking for stuck roles, goals missing at the end, matches
//!   that do not end) reports differently on the two engines ([`play_tests_agree`]),
//! - the network refuses a mutant as invalid that the Datalog evaluator accepts and `check` finds no
//!   problem with, not even a warning (both engines read the same rewritten program, so they accept the
//!   same games; a refusal for budget, recursion or an unsupported feature is not a disagreement),
//! - too few mutants of either syntax reach play on both engines (so the fuzz cannot pass vacuously,
//!   and cannot pass by fuzzing KIF alone).
//!
//! A failure prints the mutated program, the game, its syntax, the mutations, the seed and the mutant's
//! number; the number alone decides the syntax and the game, so `GGP_FUZZ_ONLY=N` (and `GGP_FUZZ_SEED`
//! if it was not the default; decimal, or hexadecimal after `0x`) reruns it. `GGP_FUZZ_CASES` and `GGP_FUZZ_SECONDS` change how many
//! mutants and how long (default: [`CASES`] mutants, stopping early after [`SECONDS`] s; about 40 s in a
//! release build on the loaded 2-core development machine, a third of the mutants infix).
//! `GGP_FUZZ_GAMES` (corpus names, comma-separated) mutates other KIF games than [`GAMES`] in a long
//! campaign, bigger ones say, whose networks use paths the small games do not (a failure's rerun line
//! then names them too).
//!
//! Regression cases found by the fuzz live in `regressions.rs`; what "the engines agree" checks past
//! loading, in `agreement.rs`. No mutant of the default run is left out.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ggp::engine::{lower, ops::to_classic, rewrite::prepare, Limits, RuleGame};
use ggp::game::Game;
use ggp::network::{ground_with, Budget, NetGame, NetworkError, PlayoutMethod};
use ggp::print::{convert, to_infix};
use ggp::syntax::{parse_infix, parse_kif, parse_str, Syntax};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::common;
use common::shared;
use mutation::{
    infix_literals, infix_statements, infix_tokens, mutate, mutate_infix, print, print_infix,
    tokens,
};

mod agreement;
mod mutation;
mod regressions;

use agreement::{decisive_agrees, fast_paths_agree, lanes_agree, play_tests_agree};

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

/// The infix games mutated: every game bundled in `games/` (each loads in well under 0.1 s), which
/// between them cover operation rules (`::`, `==>`, deletions), arithmetic built-ins (`leq`, `minus`),
/// `control`-based turns, classic rules in infix (roshambo) and disjunction.
const INFIX_GAMES: &[&str] = &[
    "tictactoe",
    "nim",
    "roshambo",
    "connect4",
    "knightstour",
    "breakthrough",
];

/// Corpus games also mutated in infix, translated by the library's converter (`ggp-run convert`): classic
/// rules with `true`/`does`/`next`, negation, `distinct`, `or` (coins, 3d, 5b), four roles, and relations
/// named like infix built-ins (knightThrough's `plus`, renamed `plus_`), as the infix grammar spells them.
const CONVERTED_GAMES: &[&str] = &[
    "blocker",
    "coins",
    "ggpbase_test_case_3d",
    "ggpbase_test_case_5b",
    "smallest_4player",
    "knightThrough",
];

/// One mutant in [`INFIX_EVERY`] is an infix one (the others are KIF): a fixed share of the mutants and
/// of the time, however many games each list names.
const INFIX_EVERY: usize = 3;

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
/// The most joint moves of each playout along the network's fast paths.
const FAST_STEPS: u32 = 40;

// ---------------------------------------------------------------------------------------------------
// Mutants

/// A game to mutate: its name, its syntax and its tokens.
struct Source {
    name: String,
    syntax: Syntax,
    tokens: Vec<String>,
}

/// Mutant number `n` of the run seeded `seed`: a game and one to three mutations. Every
/// [`INFIX_EVERY`]th mutant is an infix game's, the others a KIF game's, so the number alone says which.
fn mutant(kif: &[Source], infix: &[Source], seed: u64, n: usize) -> Mutant {
    let mut rng = SmallRng::seed_from_u64(seed ^ (n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let (list, i) = if n % INFIX_EVERY == INFIX_EVERY - 1 {
        (infix, n / INFIX_EVERY)
    } else {
        (kif, n - n / INFIX_EVERY)
    };
    let source = &list[i % list.len()];
    let mut t = source.tokens.clone();
    let count = rng.gen_range(1..=3);
    let how = (0..count)
        .map(|_| match source.syntax {
            Syntax::Kif => mutate(&mut t, &mut rng),
            Syntax::Infix => mutate_infix(&mut t, &mut rng),
        })
        .collect();
    Mutant {
        n,
        run_seed: seed,
        game: source.name.clone(),
        syntax: source.syntax,
        how,
        text: match source.syntax {
            Syntax::Kif => print(&t),
            Syntax::Infix => print_infix(&t),
        },
        seed: rng.gen(),
    }
}

struct Mutant {
    n: usize,
    /// The run's seed, which with `n` makes the mutant again.
    run_seed: u64,
    game: String,
    syntax: Syntax,
    how: Vec<String>,
    text: String,
    /// The playouts' seed.
    seed: u64,
}

impl std::fmt::Display for Mutant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "mutant {} of {} ({}; {}), rerun with GGP_FUZZ_SEED={} GGP_FUZZ_ONLY={}{}:",
            self.n,
            self.game,
            self.syntax,
            self.how.join("; "),
            self.run_seed,
            self.n,
            chosen_games().map_or(String::new(), |g| format!(
                " GGP_FUZZ_GAMES={}",
                g.join(",")
            ))
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
    /// Joint moves of the playouts compared along the network's fast paths.
    fast_steps: usize,
    /// States whose decisive move was compared, and those of them that have one.
    decisive: (usize, usize),
    /// Lanes of one step played at once and compared.
    lanes: usize,
    /// Whether `check`'s play-test gave the same report on both engines, and found a problem.
    play_test: (bool, bool),
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
fn drive(text: &str, syntax: Syntax, seed: u64) -> Result<Reach, String> {
    let mut reach = Reach::default();
    let Ok(p) = parse_str(text, syntax) else {
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
    let (rule, mut net) = match (rule, net) {
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
        // The network answers the queries by propagation or by full passes, as its playouts go.
        net.set_playout_method(if playout % 2 == 0 {
            PlayoutMethod::Propagate
        } else {
            PlayoutMethod::FullPass
        });
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
            let (mut rj, mut nj, mut every) = (Vec::new(), Vec::new(), Vec::new());
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
                    if let Some(m) = net.mover(&ns) {
                        return Err(format!(
                            "{at}: role {r} has no legal move, yet the network's mover is role {m}"
                        ));
                    }
                    break 'playout;
                }
                let i = rng.gen_range(0..rbuf.len());
                every.push(rbuf.clone());
                rj.push(rbuf[i]);
                nj.push(nbuf[i]);
            }
            let (rm, nm) = (rule.mover(&rs), net.mover(&ns));
            if rm != nm {
                return Err(format!("{at}: mover: datalog {rm:?}, network {nm:?}"));
            }
            // The decisive move and a step of 64 lanes, each tried move by move on Datalog: in the
            // first playout only.
            if let (0, Some(m)) = (playout, nm) {
                if let Some(found) = decisive_agrees(&rule, &net, (&rs, &ns), m, &every)
                    .map_err(|e| format!("{at}: {e}"))?
                {
                    reach.decisive.0 += 1;
                    reach.decisive.1 += usize::from(found);
                }
            }
            if playout == 0 {
                reach.lanes += lanes_agree(&rule, &net, (&rs, &ns), &every, seed)
                    .map_err(|e| format!("{at}: {e}"))?;
            }
            let Ok(next) = rule.try_next(&rs, &rj) else {
                break;
            };
            rs = next;
            ns = net.next_state(&ns, &nj);
            reach.steps += 1;
        }
    }
    reach.fast_steps = fast_paths_agree(&rule, &mut net, seed)?;
    reach.play_test = play_tests_agree(&p, &rule, &net, seed)?;
    Ok(reach)
}

/// [`drive`] with a panic turned into an error naming it.
fn drive_caught(text: &str, syntax: Syntax, seed: u64) -> Result<Reach, String> {
    std::panic::catch_unwind(AssertUnwindSafe(|| drive(text, syntax, seed))).unwrap_or_else(
        |panic| {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(no message)".into());
            Err(format!("panicked: {msg}"))
        },
    )
}

/// How far the mutants of one syntax got, summed.
#[derive(Default)]
struct Tally {
    total: usize,
    parsed: usize,
    checked: usize,
    lowered: usize,
    both: usize,
    datalog_only: usize,
    network_only: usize,
    compared: usize,
    steps: usize,
    fast_steps: usize,
    decisive: (usize, usize),
    lanes: usize,
    play_tests: (usize, usize),
}

impl Tally {
    fn add(&mut self, r: &Reach) {
        self.parsed += usize::from(r.parsed);
        self.checked += usize::from(r.checked_ok);
        self.lowered += usize::from(r.lowered);
        self.both += usize::from(r.datalog && r.network);
        self.compared += usize::from(r.compared);
        self.datalog_only += usize::from(r.datalog && !r.network);
        self.network_only += usize::from(!r.datalog && r.network);
        self.steps += r.steps;
        self.fast_steps += r.fast_steps;
        self.decisive.0 += r.decisive.0;
        self.decisive.1 += r.decisive.1;
        self.lanes += r.lanes;
        self.play_tests.0 += usize::from(r.play_test.0);
        self.play_tests.1 += usize::from(r.play_test.1);
    }

    /// Not vacuous: enough of these mutants ran, and most got through to play on both engines.
    fn assert_enough(&self, syntax: Syntax, min_total: usize) {
        let Tally {
            total,
            both,
            compared,
            steps,
            fast_steps,
            decisive,
            lanes,
            play_tests,
            ..
        } = *self;
        assert!(
            total >= min_total,
            "only {total} {syntax} mutants ran in the time"
        );
        assert!(
            both * 3 >= total,
            "only {both} of {total} {syntax} mutants loaded on both engines"
        );
        assert!(
            compared * 4 >= total,
            "only {compared} of {total} {syntax} mutants were played on both engines"
        );
        assert!(
            steps >= total,
            "only {steps} joint moves compared for {total} {syntax} mutants"
        );
        assert!(
            fast_steps >= total,
            "only {fast_steps} joint moves of playouts on the fast paths for {total} {syntax} mutants"
        );
        assert!(
            decisive.1 * 20 >= total,
            "only {} states with a decisive move compared for {total} {syntax} mutants",
            decisive.1
        );
        assert!(
            lanes >= total,
            "only {lanes} lanes of a step compared for {total} {syntax} mutants"
        );
        assert!(
            play_tests.0 * 2 >= compared && play_tests.1 * 50 >= compared,
            "only {} play-tests compared ({} finding a problem) for {compared} {syntax} mutants played",
            play_tests.0,
            play_tests.1
        );
    }
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} mutants: {} parsed, {} valid by `check`, {} lowered, {} loaded on both engines \
             ({} on Datalog only, {} on the network only), {} compared in play ({} joint moves; \
             {} in full-pass playouts checked along the fast paths; decisive moves compared in {} \
             states, {} with one; {} lanes of a step; {} play-tests, {} finding a problem)",
            self.total,
            self.parsed,
            self.checked,
            self.lowered,
            self.both,
            self.datalog_only,
            self.network_only,
            self.compared,
            self.steps,
            self.fast_steps,
            self.decisive.0,
            self.decisive.1,
            self.lanes,
            self.play_tests.0,
            self.play_tests.1
        )
    }
}

/// The KIF games `GGP_FUZZ_GAMES` names instead of [`GAMES`], if it is set.
fn chosen_games() -> Option<Vec<String>> {
    let names = std::env::var("GGP_FUZZ_GAMES").ok()?;
    Some(names.split(',').map(|g| g.trim().to_string()).collect())
}

/// The games to mutate: the corpus's KIF games, and in infix the bundled games and the converted corpus
/// games.
fn sources() -> (Vec<Source>, Vec<Source>) {
    let kif = shared().join("games/kif");
    let read = |path: std::path::PathBuf| {
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    let kif_sources = chosen_games()
        .unwrap_or_else(|| GAMES.iter().map(|g| g.to_string()).collect())
        .iter()
        .map(|g| Source {
            name: g.to_string(),
            syntax: Syntax::Kif,
            tokens: tokens(&read(kif.join(format!("{g}.kif")))),
        })
        .collect();
    let games = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("games");
    let bundled = INFIX_GAMES.iter().map(|g| Source {
        name: format!("{g}.gdl"),
        syntax: Syntax::Infix,
        tokens: infix_tokens(&read(games.join(format!("{g}.gdl")))),
    });
    let converted = CONVERTED_GAMES.iter().map(|g| {
        let p =
            parse_kif(&read(kif.join(format!("{g}.kif")))).unwrap_or_else(|e| panic!("{g}: {e:?}"));
        let q = convert(&p, Syntax::Infix).unwrap_or_else(|e| panic!("{g}: {e}"));
        Source {
            name: format!("{g} (converted to infix)"),
            syntax: Syntax::Infix,
            tokens: infix_tokens(&to_infix(&q)),
        }
    });
    (kif_sources, bundled.chain(converted).collect())
}

#[test]
fn mutated_corpus_games_pass_every_stage_and_the_engines_agree() {
    let seed = common::env_number("GGP_FUZZ_SEED").unwrap_or(SEED);
    let cases = common::env_number("GGP_FUZZ_CASES").map_or(CASES, |n| n as usize);
    let seconds = Duration::from_secs(common::env_number("GGP_FUZZ_SECONDS").unwrap_or(SECONDS));
    let only = common::env_number("GGP_FUZZ_ONLY").map(|n| n as usize);
    let sources = Arc::new(sources());
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
                let m = mutant(&sources.0, &sources.1, seed, n);
                *current.lock().unwrap_or_else(|p| p.into_inner()) = Some(m.to_string());
                let t = Instant::now();
                let result = drive_caught(&m.text, m.syntax, m.seed);
                if tx.send((m, result, t.elapsed())).is_err() {
                    break;
                }
            }
        });
    }
    let (mut kif, mut infix) = (Tally::default(), Tally::default());
    let mut slowest = (Duration::ZERO, String::new());
    let mut failures = Vec::new();
    loop {
        match rx.recv_timeout(MUTANT_LIMIT) {
            Ok((m, result, took)) => {
                let tally = match m.syntax {
                    Syntax::Kif => &mut kif,
                    Syntax::Infix => &mut infix,
                };
                tally.total += 1;
                if took > slowest.0 {
                    slowest = (took, format!("mutant {} of {}", m.n, m.game));
                }
                match result {
                    Ok(r) => tally.add(&r),
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
        "seed {seed:#x}, {:.1} s; slowest {} ms ({})\n  KIF: {kif}\n  infix: {infix}",
        started.elapsed().as_secs_f64(),
        slowest.0.as_millis(),
        slowest.1
    );
    let total = kif.total + infix.total;
    assert!(
        failures.is_empty(),
        "{} of {total} mutants failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    if only.is_none() {
        kif.assert_enough(Syntax::Kif, 100);
        infix.assert_enough(Syntax::Infix, 50);
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
    assert!(drive_caught(&src, Syntax::Kif, 1).unwrap().steps > 0);
    let caught = drive_caught("(role", Syntax::Kif, 1).map(|r| r.parsed);
    assert_eq!(caught, Ok(false));
}

#[test]
fn the_mutator_reads_and_prints_infix_faithfully() {
    // Printed back, the tokens of every infix game give the same program, and the statements the mutator
    // finds are the parser's.
    let (_, infix) = sources();
    for source in &infix {
        let text = print_infix(&source.tokens);
        let back = parse_infix(&text).unwrap_or_else(|e| panic!("{}: {e:?}\n{text}", source.name));
        assert_eq!(
            infix_statements(&source.tokens).len(),
            back.statements.len(),
            "{}: the mutator's statements are not the parser's",
            source.name
        );
        if source.name.ends_with(".gdl") {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("games")
                .join(&source.name);
            let p = parse_infix(&std::fs::read_to_string(path).unwrap()).unwrap();
            assert!(
                p.statements == back.statements,
                "{}: the token printer changes the program",
                source.name
            );
        }
        // Each is a game both engines play alike, so the infix mutants start from playable games.
        let r = drive_caught(&text, Syntax::Infix, 1)
            .unwrap_or_else(|e| panic!("{}: {e}", source.name));
        assert!(r.compared && r.steps > 0, "{}: {r:?}", source.name);
    }
    // A literal's deletion takes its `&` or, alone, its `:-` with it, so the rest still parses.
    let t = infix_tokens("a :- b & ~c(X) d(1). e :: f ==> g");
    let lits: Vec<String> = infix_statements(&t)
        .into_iter()
        .flat_map(|(a, b)| infix_literals(&t, a, b))
        .map(|((x, y), (ga, gb))| format!("{} / {}", t[x..y].join(" "), t[ga..gb].join(" ")))
        .collect();
    assert_eq!(
        lits,
        [
            "b / b &",
            "~ c ( X ) / & ~ c ( X )",
            "f / :: f",
            "g / ==> g"
        ]
    );
}
