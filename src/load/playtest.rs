//! The play-test: random matches on a loaded game, for what the rules alone cannot show.
//!
//! GDL asks of a game that every role has a legal move in every reachable state that is not terminal,
//! that every role has exactly one goal value, from 0 to 100, in every terminal state, and that the game
//! ends. No static check decides these (they depend on which states can be reached), so [`play_test`]
//! plays random matches from the initial state on either engine (any [`TraceGame`]) and reports the
//! first state where each goes wrong, with the moves that led there: a role stuck without a move, a
//! terminal state without exactly one goal value in range, an error of the rules' evaluation (errors),
//! and matches that do not end (a warning: random play may only be slow to end). A clean play-test
//! cannot prove a game well-formed; a failed one shows that it is not.
//!
//! The matches are drawn from a fixed seed, so the same game always gets the same report, unless the
//! time limit (a few seconds, for games on a slow evaluator) stops it first.

use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::diagnostics::{count, count_as, Diagnostic};
use crate::engine::conformance::TraceGame;
use crate::syntax::ast::{Atom, Program, Span, Statement, Term};
use crate::syntax::Keyword;

/// How much a [`play_test`] plays.
#[derive(Clone, Copy, Debug)]
pub struct PlayTest {
    /// Random matches to play.
    pub matches: usize,
    /// The most joint moves of one match before it counts as not ending.
    pub max_moves: usize,
    /// The play-test stops after this long, within one step of a match (the report says how many
    /// were played); the first match always starts.
    pub max_time: Duration,
    /// The seed the moves are drawn from.
    pub seed: u64,
}

impl Default for PlayTest {
    fn default() -> PlayTest {
        PlayTest {
            matches: 20,
            max_moves: 1000,
            max_time: Duration::from_secs(5),
            seed: 0x9a3e_7e57,
        }
    }
}

/// What a [`play_test`] found.
#[derive(Clone, Debug, Default)]
pub struct PlayTestReport {
    /// Matches played (fewer than asked when time ran out).
    pub played: usize,
    /// Matches that reached a terminal state.
    pub ended: usize,
    /// The fewest and most joint moves of a match that ended, and their total.
    pub moves: Option<(usize, usize, usize)>,
    /// Matches stopped at the first problem they met (a stuck role, an error of the rules).
    pub broken: usize,
    /// Matches still going after the most moves allowed.
    pub unended: usize,
    /// Matches stopped when the time allowed ran out.
    pub abandoned: usize,
    /// Each problem found, once per kind and role, at the place in the file it concerns.
    pub problems: Vec<Diagnostic>,
}

/// Where each relation (or action) is first defined in a program: the place of a load error that
/// names one. Taken before the program is handed to the loader.
#[derive(Clone, Debug, Default)]
pub struct RulePlaces(Vec<(String, Span)>);

impl RulePlaces {
    /// The places of `program`'s relations.
    pub fn of(program: &Program) -> RulePlaces {
        let mut places: Vec<(String, Span)> = Vec::new();
        for st in &program.statements {
            let head = match st {
                Statement::Rule { head, .. } => head,
                Statement::Operation { action, .. } => action,
            };
            let name = program.symbols.name(head.pred);
            if !places.iter().any(|(n, _)| n == name) {
                places.push((name.to_string(), head.span));
            }
        }
        RulePlaces(places)
    }

    /// Where `name` is first defined (keywords in any case, as the engines read them; a relation the
    /// rewrites made from one of the author's, `true$cell` or `q#bf`, where that one is).
    fn find(&self, name: &str) -> Option<Span> {
        let named = |name: &str| {
            let exact = self.0.iter().find(|(n, _)| n == name);
            exact
                .or_else(|| self.0.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)))
                .map(|(_, span)| *span)
        };
        named(name).or_else(|| {
            let made = name
                .split(['$', '#'])
                .next()
                .filter(|n| n.len() < name.len())?;
            named(made)
        })
    }
}

impl PlayTestReport {
    /// The report on a game that does not load (whose rules pass [`check`](crate::check::check)): one
    /// error saying why, at the first rule of the relation it names (at the start of the file when it
    /// names none).
    pub fn unplayable(why: &crate::load::LoadError, places: &RulePlaces) -> PlayTestReport {
        let at = match why {
            crate::load::LoadError::Engine(e) => e.relation().and_then(|r| places.find(r)),
            _ => None,
        };
        PlayTestReport {
            problems: vec![Diagnostic::error(
                at.unwrap_or_default(),
                format!("the game cannot be played: {why}"),
            )],
            ..PlayTestReport::default()
        }
    }

    /// Whether a problem is an error (the game cannot be played as GDL intends).
    pub fn has_errors(&self) -> bool {
        self.problems.iter().any(Diagnostic::is_error)
    }

    /// One line saying what was played: `20 random matches, all ended after 5 to 9 moves (7.1 on
    /// average)`.
    pub fn summary(&self) -> String {
        let after = match self.moves {
            None => String::new(),
            Some((lo, hi, _)) if lo == hi => format!(" after {}", count(lo, "move")),
            Some((lo, hi, total)) => format!(
                " after {lo} to {hi} moves ({:.1} on average)",
                total as f64 / self.ended as f64
            ),
        };
        match (self.played, self.ended) {
            (1, 1) => format!("1 random match, ended{after}"),
            (played, ended) if played == ended => {
                format!("{played} random matches, all ended{after}")
            }
            (played, ended) => {
                let mut parts = vec![format!("{ended} ended{after}")];
                for (n, what) in [
                    (self.unended, "did not end"),
                    (self.broken, "stopped at a problem"),
                    (self.abandoned, "stopped when the time allowed ran out"),
                ] {
                    if n > 0 {
                        parts.push(format!("{n} {what}"));
                    }
                }
                format!("{}: {}", matches(played), parts.join(", "))
            }
        }
    }
}

/// Plays `options.matches` random matches of `game` (loaded from `p`) and reports what goes wrong; see
/// the module documentation.
pub fn play_test<G: TraceGame>(p: &Program, game: &G, options: PlayTest) -> PlayTestReport {
    let started = Instant::now();
    let out_of_time = || started.elapsed() >= options.max_time;
    let mut rng = SmallRng::seed_from_u64(options.seed);
    let mut report = PlayTestReport::default();
    let mut found = Found::default();
    let roles = game.info().roles.clone();
    let infix = p.syntax == crate::syntax::ast::Syntax::Infix;
    while report.played < options.matches && !(report.played > 0 && out_of_time()) {
        report.played += 1;
        let mut state = game.initial_state();
        let mut history: Vec<Vec<String>> = Vec::new();
        let outcome = loop {
            let facts = || game.trace_state(&state);
            let at = Place {
                history: &history,
                facts: &facts,
                infix,
            };
            match game.trace_terminal(&state) {
                Err(e) => {
                    found.rules_error(&at, &e);
                    break Outcome::Broken;
                }
                Ok(true) => {
                    for (r, role) in roles.iter().enumerate() {
                        match game.trace_goals(&state, r) {
                            Err(e) => found.rules_error(&at, &e),
                            Ok(goals) => found.goals(p, &at, role, &goals),
                        }
                    }
                    break Outcome::Ended(history.len());
                }
                Ok(false) => {}
            }
            if history.len() >= options.max_moves {
                break Outcome::Unended;
            }
            if out_of_time() {
                break Outcome::Abandoned;
            }
            let mut joint_text = Vec::with_capacity(roles.len());
            let mut joint = Vec::with_capacity(roles.len());
            for (r, role) in roles.iter().enumerate() {
                let legal = match game.trace_legal(&state, r) {
                    Ok(legal) => legal,
                    Err(e) => {
                        found.rules_error(&at, &e);
                        break;
                    }
                };
                if legal.is_empty() {
                    found.stuck(p, &at, role);
                    break;
                }
                let text = legal[rng.gen_range(0..legal.len())].clone();
                let Some(mv) = game.trace_move(&text) else {
                    let e =
                        format!("the legal move `{text}` of {role} is not a move the engine knows");
                    found.rules_error(&at, &e);
                    break;
                };
                joint.push(mv);
                joint_text.push(text);
            }
            if joint.len() < roles.len() {
                break Outcome::Broken;
            }
            history.push(joint_text);
            match game.trace_next(&state, &joint) {
                Ok(next) => state = next,
                Err(e) => {
                    let at = Place {
                        history: &history,
                        facts: &Vec::new,
                        infix,
                    };
                    found.rules_error(&at, &e);
                    break Outcome::Broken;
                }
            }
        };
        match outcome {
            Outcome::Ended(n) => {
                report.ended += 1;
                report.moves = Some(match report.moves {
                    None => (n, n, n),
                    Some((lo, hi, total)) => (lo.min(n), hi.max(n), total + n),
                });
            }
            Outcome::Unended => report.unended += 1,
            Outcome::Broken => report.broken += 1,
            Outcome::Abandoned => report.abandoned += 1,
        }
    }
    if report.unended > 0 {
        found.problems.push(
            Diagnostic::warning(
                rule_span(p, Keyword::Terminal, |_| true),
                format!(
                    "{} of {} did not end within {}",
                    report.unended,
                    matches(report.played),
                    count(options.max_moves, "move")
                ),
            )
            .with_help(
                "a GDL game must end: make `terminal` hold after a bounded number of moves \
                 (a step counter, for one)",
            ),
        );
    }
    report.problems = found.problems;
    report
}

/// `1 random match`, `2 random matches`.
fn matches(n: usize) -> String {
    count_as(n, "random match", "random matches")
}

/// How one match stopped.
enum Outcome {
    /// In a terminal state, after this many joint moves.
    Ended(usize),
    /// Still going after the most moves allowed.
    Unended,
    /// At a problem (a role stuck, an error of the rules).
    Broken,
    /// When the time allowed ran out.
    Abandoned,
}

/// Where a match is: the joint moves played (as KIF, in role order) and the state's facts, made only
/// when a problem is reported.
struct Place<'a> {
    history: &'a [Vec<String>],
    facts: &'a dyn Fn() -> Vec<String>,
    /// Shown in infix, the game's own syntax, rather than as KIF.
    infix: bool,
}

impl Place<'_> {
    /// `after 2 moves ((mark 1 1) noop, noop (mark 2 2))`, `after 200 moves (the last 8: ...)`, or `in
    /// the initial state`.
    fn when(&self) -> String {
        const SHOWN: usize = 8;
        if self.history.is_empty() {
            return "in the initial state".into();
        }
        let n = self.history.len();
        let moves: Vec<String> = self.history[n.saturating_sub(SHOWN)..]
            .iter()
            .map(|joint| {
                let texts: Vec<String> = joint.iter().map(|m| self.shown(m)).collect();
                texts.join(" ")
            })
            .collect();
        let last = if n > SHOWN {
            format!("the last {SHOWN}: ")
        } else {
            String::new()
        };
        format!("after {} ({last}{})", count(n, "move"), moves.join(", "))
    }

    /// The state's facts, the first few of them.
    fn state(&self) -> String {
        const SHOWN: usize = 80;
        let facts = (self.facts)();
        let mut s = facts
            .iter()
            .take(SHOWN)
            .map(|f| self.shown(f))
            .collect::<Vec<_>>()
            .join(" ");
        if facts.len() > SHOWN {
            s.push_str(&format!(" and {} more", facts.len() - SHOWN));
        }
        s
    }
}

impl Place<'_> {
    /// A move or fact, given as KIF, in the game's own syntax.
    fn shown(&self, kif: &str) -> String {
        if self.infix {
            kif_to_infix(kif)
        } else {
            kif.to_string()
        }
    }
}

/// A KIF term as infix writes it: `(mark 1 (f a))` is `mark(1, f(a))`. Text that is not one term
/// is left as it is.
fn kif_to_infix(kif: &str) -> String {
    fn term<'a>(tokens: &mut std::iter::Peekable<impl Iterator<Item = &'a str>>) -> Option<String> {
        match tokens.next()? {
            "(" => {
                let head = tokens
                    .next()
                    .filter(|t| *t != "(" && *t != ")")?
                    .to_string();
                let mut args = Vec::new();
                while tokens.peek() != Some(&")") {
                    args.push(term(tokens)?);
                }
                tokens.next();
                Some(format!("{head}({})", args.join(", ")))
            }
            ")" => None,
            word => Some(word.to_string()),
        }
    }
    let spaced = kif.replace('(', " ( ").replace(')', " ) ");
    let mut tokens = spaced.split_whitespace().peekable();
    match term(&mut tokens) {
        Some(t) if tokens.next().is_none() => t,
        _ => kif.to_string(),
    }
}

/// The problems found so far, each kind (and role) once.
#[derive(Default)]
struct Found {
    problems: Vec<Diagnostic>,
    seen: Vec<String>,
}

impl Found {
    fn first(&mut self, kind: String) -> bool {
        if self.seen.contains(&kind) {
            return false;
        }
        self.seen.push(kind);
        true
    }

    fn stuck(&mut self, p: &Program, at: &Place, role: &str) {
        if !self.first(format!("stuck {role}")) {
            return;
        }
        let help = "every role needs a legal move in every state that is not terminal (a turn-taking game \
                    gives the role not in control a `noop`)";
        let d = Diagnostic::error(
            role_span(p, role),
            format!("the role `{role}` has no legal move {}", at.when()),
        );
        self.problems.push(if at.history.is_empty() {
            d.with_help(help)
        } else {
            d.with_help(format!("{help}; the state: {}", at.state()))
        });
    }

    fn goals(&mut self, p: &Program, at: &Place, role: &str, goals: &[i32]) {
        let wrong = match goals {
            [g] if (0..=100).contains(g) => return,
            [] => "no goal value".to_string(),
            [g] => format!("the goal value {g} (goal values run from 0 to 100)"),
            _ => format!(
                "{} goal values ({})",
                goals.len(),
                goals
                    .iter()
                    .map(i32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        if !self.first(format!("goals {role}")) {
            return;
        }
        self.problems.push(
            Diagnostic::error(
                role_span(p, role),
                format!(
                    "the role `{role}` has {wrong} in a terminal state reached {}",
                    at.when()
                ),
            )
            .with_help(format!(
                "every role needs exactly one goal value, an integer from 0 to 100, in every terminal \
                 state; the state: {}",
                at.state()
            )),
        );
    }

    fn rules_error(&mut self, at: &Place, e: &str) {
        if !self.first("rules".into()) {
            return;
        }
        let e = e.strip_prefix("error: ").unwrap_or(e);
        self.problems.push(Diagnostic::error(
            Span::default(),
            format!("the rules cannot be evaluated {}: {e}", at.when()),
        ));
    }
}

/// Where `role` is declared (its `role` fact), or the start of the file.
fn role_span(p: &Program, role: &str) -> Span {
    rule_span(p, Keyword::Role, |head| {
        head.args.first().is_some_and(|a| names(p, a, role))
    })
}

/// Whether `t` is the constant `name` (as roles are written).
fn names(p: &Program, t: &Term, name: &str) -> bool {
    match t {
        Term::Const(c, _) => p.symbols.name(*c) == name,
        Term::Func(f, args, _) => args.is_empty() && p.symbols.name(*f) == name,
        Term::Var(..) => false,
    }
}

/// Where the first rule for `keyword` whose head passes `which` is, or the start of the file.
fn rule_span(p: &Program, keyword: Keyword, which: impl Fn(&Atom) -> bool) -> Span {
    p.statements
        .iter()
        .find_map(|st| match st {
            Statement::Rule { head, span, .. }
                if Keyword::of(p.symbols.name(head.pred)) == Some(keyword) && which(head) =>
            {
                Some(*span)
            }
            _ => None,
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RuleGame;
    use crate::syntax::parse_kif;

    #[test]
    fn a_load_error_that_names_a_relation_is_placed_at_its_first_rule() {
        use crate::datalog::{EngineError, Invalid};
        use crate::load::LoadError;
        let src = "(role r)\n(init (a))\n(<= (goal r 100) (true (a)))\n(<= (goal r 0) (true (b)))";
        let program = parse_kif(src).expect("parses");
        let places = RulePlaces::of(&program);
        let at = |e: EngineError| {
            let report = PlayTestReport::unplayable(&LoadError::Engine(e), &places);
            let span = report.problems[0].span;
            src[..span.start as usize].matches('\n').count() + 1
        };
        // The third line holds the first `goal` rule; a keyword in capitals is the same relation.
        assert_eq!(
            at(EngineError::Invalid(Invalid::NotStratified("goal".into()))),
            3
        );
        assert_eq!(
            at(EngineError::Invalid(Invalid::NotStratified("GOAL".into()))),
            3
        );
        let unsafe_rule = Invalid::Unsafe {
            why: "a negation".into(),
            rule: "goal(r, ?x) :- true(a).".into(),
        };
        assert_eq!(at(EngineError::Invalid(unsafe_rule)), 3);
        let unsafe_fact = Invalid::Unsafe {
            why: "a negation".into(),
            rule: "goal.".into(),
        };
        assert_eq!(at(EngineError::Invalid(unsafe_fact)), 3);
        // A relation the rewrites made from the author's.
        assert_eq!(
            at(EngineError::Invalid(Invalid::NotStratified(
                "goal#bf".into()
            ))),
            3
        );
        // A relation of the lowering's own (`__not1`), or none, is placed at the start.
        assert_eq!(
            at(EngineError::Invalid(Invalid::NotStratified(
                "__not1".into()
            ))),
            1
        );
        assert_eq!(at(EngineError::Invalid(Invalid::NoRoles)), 1);
    }

    /// Two roles taking turns at a counter, which the mover either moves on (`inc`) or not (`stay`).
    const COUNTER: &str = "(role a) (role b) (init (step 0)) (init (pos 0)) (init (control a))
        (succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5) (succ 5 6)
        (<= (legal ?r inc) (true (control ?r)))
        (<= (legal ?r stay) (true (control ?r)))
        (<= (legal a noop) (true (control b)))
        (<= (legal b noop) (true (control a)))
        (<= (next (step ?y)) (true (step ?x)) (succ ?x ?y))
        (<= (next (pos ?y)) (does ?r inc) (true (pos ?x)) (succ ?x ?y))
        (<= (next (pos ?x)) (does ?r stay) (true (pos ?x)))
        (<= (next (control a)) (true (control b)))
        (<= (next (control b)) (true (control a)))";

    /// The play-test of the counter with `rules` added and the rule `removed` taken out.
    fn test(removed: &str, rules: &str, options: PlayTest) -> PlayTestReport {
        assert!(COUNTER.contains(removed));
        let p = parse_kif(&format!("{}\n{rules}", COUNTER.replace(removed, ""))).expect("parses");
        let game = RuleGame::from_program(&p, "counter").expect("loads");
        let report = play_test(&p, &game, options);
        for d in &report.problems {
            // (Spans compare equal whatever their place, so that programs compare by their text.)
            assert!(d.span.end > 0, "{}: at a place", d.message);
        }
        report
    }

    /// The messages of the problems found, `error: ...` or `warning: ...`.
    fn messages(r: &PlayTestReport) -> Vec<String> {
        r.problems
            .iter()
            .map(|d| {
                let kind = if d.is_error() { "error" } else { "warning" };
                format!("{kind}: {}", d.message)
            })
            .collect()
    }

    /// The default play-test without its time limit, so that a busy machine plays the same matches.
    fn untimed() -> PlayTest {
        PlayTest {
            max_time: Duration::from_secs(3600),
            ..PlayTest::default()
        }
    }

    const ENDS: &str = "(<= terminal (true (step 3))) (goal a 100) (goal b 0)";
    const B_NOOP: &str = "(<= (legal b noop) (true (control a)))";

    #[test]
    fn a_well_formed_game_passes_and_the_report_says_what_was_played() {
        let r = test("", ENDS, untimed());
        assert_eq!(messages(&r), Vec::<String>::new());
        assert_eq!((r.played, r.ended, r.moves), (20, 20, Some((3, 3, 60))));
        assert_eq!(r.summary(), "20 random matches, all ended after 3 moves");
        // Ended by either counter: the matches differ, and the same seed plays the same ones.
        let rules =
            "(<= terminal (true (pos 2))) (<= terminal (true (step 6))) (goal a 50) (goal b 50)";
        let r = test("", rules, untimed());
        let (lo, hi, _) = r.moves.expect("ended");
        assert!(lo < hi, "{}", r.summary());
        assert_eq!(r.summary(), test("", rules, untimed()).summary());
    }

    #[test]
    fn each_kind_of_problem_is_found_once() {
        let cases: &[(&str, &str, &[&str])] = &[
            // `b` gets no `noop` once the step counter reaches 2.
            (
                B_NOOP,
                "(<= (legal b noop) (true (control a)) (not (true (step 2)))) \
                 (<= terminal (true (step 3))) (goal a 100) (goal b 0)",
                &["error: the role `b` has no legal move after 2 moves"],
            ),
            (
                "",
                "(<= terminal (true (step 3))) (goal a 100)",
                &["error: the role `b` has no goal value in a terminal state reached after 3 moves"],
            ),
            (
                "",
                "(<= terminal (true (step 3))) (goal a 100) (goal b 0) (goal b 50)",
                &["error: the role `b` has 2 goal values (0, 50) in a terminal state reached after 3 moves"],
            ),
            (
                "",
                "(<= terminal (true (step 3))) (score 150) (<= (goal ?r ?x) (role ?r) (score ?x))",
                &[
                    "error: the role `a` has the goal value 150 (goal values run from 0 to 100) in a terminal state",
                    "error: the role `b` has the goal value 150 (goal values run from 0 to 100) in a terminal state",
                ],
            ),
            (
                "",
                "(<= terminal (true (step 9))) (goal a 100) (goal b 0)",
                &["warning: 20 of 20 random matches did not end within 50 moves"],
            ),
        ];
        for (removed, rules, expected) in cases {
            let options = PlayTest {
                max_moves: 50,
                ..untimed()
            };
            let found = messages(&test(removed, rules, options));
            assert_eq!(found.len(), expected.len(), "{rules}: {found:?}");
            for (f, e) in found.iter().zip(*expected) {
                assert!(f.starts_with(e), "{rules}: {f:?} should start with {e:?}");
            }
        }
    }

    #[test]
    fn a_stuck_role_is_shown_with_the_moves_and_the_state_that_led_there() {
        let p = parse_kif(&format!(
            "{}\n(<= (legal b noop) (true (control a)) (not (true (step 2)))) \
             (<= terminal (true (step 3))) (goal a 100) (goal b 0)",
            COUNTER.replace(B_NOOP, "")
        ))
        .expect("parses");
        let game = RuleGame::from_program(&p, "counter").expect("loads");
        let r = play_test(&p, &game, untimed());
        let d = &r.problems[0];
        // Two joint moves in role order (`a` moves, `b` waits; then the other way), and the state.
        let moved = |m: &str| {
            ["inc", "stay"]
                .iter()
                .any(|x| m == format!("{x} noop") || m == format!("noop {x}"))
        };
        let shown = d
            .message
            .split_once("after 2 moves (")
            .map(|x| x.1)
            .unwrap_or_default();
        let joint: Vec<&str> = shown.trim_end_matches(')').split(", ").collect();
        assert!(
            joint.len() == 2 && joint.iter().all(|m| moved(m)),
            "{}",
            d.message
        );
        let help = d.help.as_deref().unwrap_or_default();
        assert!(help.contains("; the state: (control a) (pos "), "{help}");
        assert!(help.ends_with("(step 2)"), "{help}");
        let fact = role_span(&p, "b");
        assert_eq!((d.span.start, d.span.end), (fact.start, fact.end));
        assert!(fact.end > 0);
        // Every match stops there.
        assert_eq!((r.ended, r.broken), (0, r.played));
    }

    #[test]
    fn time_stops_the_matches_but_the_first_one_starts() {
        let options = PlayTest {
            max_time: Duration::ZERO,
            ..PlayTest::default()
        };
        let r = test("", ENDS, options);
        assert_eq!((r.played, r.ended, r.abandoned), (1, 0, 1));
        assert_eq!(
            r.summary(),
            "1 random match: 0 ended, 1 stopped when the time allowed ran out"
        );
    }
}
