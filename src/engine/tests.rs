//! Unit tests of the engine on programs built in code (the parsers live elsewhere).

use super::*;
use crate::game::{perft, Game};
use crate::syntax::ast::{Atom, Literal, Program, Span, Statement, Symbols, Syntax, Term};

/// A test-only builder: terms are written `?x` (variable), `name` (constant) or built with `f`.
struct B {
    p: Program,
}

enum T {
    S(&'static str),
    F(&'static str, Vec<T>),
}

fn f(name: &'static str, args: Vec<T>) -> T {
    T::F(name, args)
}

impl From<&'static str> for T {
    fn from(s: &'static str) -> T {
        T::S(s)
    }
}

macro_rules! t {
    ($($x:expr),*) => { vec![$(T::from($x)),*] };
}

impl B {
    fn new(syntax: Syntax) -> B {
        B {
            p: Program {
                statements: vec![],
                symbols: Symbols::new(),
                syntax,
                comments: vec![],
                blank_lines: vec![],
            },
        }
    }
    fn term(&mut self, t: &T) -> Term {
        match t {
            T::S(s) if s.starts_with('?') => {
                Term::Var(self.p.symbols.intern(&s[1..]), Span::default())
            }
            T::S(s) => Term::Const(self.p.symbols.intern(s), Span::default()),
            T::F(n, args) => {
                let sym = self.p.symbols.intern(n);
                let a = args.iter().map(|x| self.term(x)).collect();
                Term::Func(sym, a, Span::default())
            }
        }
    }
    fn atom(&mut self, pred: &str, args: Vec<T>) -> Atom {
        Atom {
            pred: self.p.symbols.intern(pred),
            args: args.iter().map(|x| self.term(x)).collect(),
            parens: false,
            span: Span::default(),
        }
    }
    fn lit(&mut self, pred: &str, args: Vec<T>) -> Literal {
        Literal::Atom(self.atom(pred, args))
    }
    fn not(&mut self, pred: &str, args: Vec<T>) -> Literal {
        Literal::Not(Box::new(self.lit(pred, args)), Span::default())
    }
    fn rule(&mut self, head: Atom, body: Vec<Literal>) -> &mut Self {
        self.p.statements.push(Statement::Rule {
            head,
            body,
            span: Span::default(),
        });
        self
    }
    fn fact(&mut self, pred: &str, args: Vec<T>) -> &mut Self {
        let a = self.atom(pred, args);
        self.rule(a, vec![])
    }
}

/// A counting game: `a` and `b` take turns to advance a counter from 0 to 3; whoever moves it to 3 wins.
fn counter() -> Program {
    let mut b = B::new(Syntax::Kif);
    b.fact("role", t!["a"]).fact("role", t!["b"]);
    for (x, y) in [("0", "1"), ("1", "2"), ("2", "3")] {
        b.fact("succ", t![x, y]);
    }
    b.fact("init", vec![f("step", t!["0"])]);
    b.fact("INIT", vec![f("control", t!["a"])]);
    let h = b.atom("legal", t!["?r", "inc"]);
    let l = b.lit("true", vec![f("control", t!["?r"])]);
    b.rule(h, vec![l]);
    let h = b.atom("legal", t!["?r", "noop"]);
    let (l1, l2) = (
        b.lit("role", t!["?r"]),
        b.not("TRUE", vec![f("control", t!["?r"])]),
    );
    b.rule(h, vec![l1, l2]);
    let h = b.atom("next", vec![f("step", t!["?y"])]);
    let (l1, l2, l3) = (
        b.lit("true", vec![f("step", t!["?x"])]),
        b.lit("succ", t!["?x", "?y"]),
        b.lit("does", t!["?r", "inc"]),
    );
    b.rule(h, vec![l1, l2, l3]);
    for (x, y) in [("a", "b"), ("b", "a")] {
        let h = b.atom("next", vec![f("control", t![y])]);
        let l = b.lit("true", vec![f("control", t![x])]);
        b.rule(h, vec![l]);
    }
    // reach is recursive: the transitive closure of succ.
    let h = b.atom("reach", t!["?x", "?y"]);
    let l = b.lit("succ", t!["?x", "?y"]);
    b.rule(h, vec![l]);
    let h = b.atom("reach", t!["?x", "?z"]);
    let (l1, l2) = (
        b.lit("reach", t!["?x", "?y"]),
        b.lit("succ", t!["?y", "?z"]),
    );
    b.rule(h, vec![l1, l2]);
    let h = b.atom("terminal", t![]);
    let (l1, l2) = (
        b.lit("true", vec![f("step", t!["?x"])]),
        b.not("reach", t!["?x", "3"]),
    );
    b.rule(h, vec![l1, l2]);
    // The winner is the role not in control when the counter reaches 3 (or-expanded).
    for (r, o) in [("a", "b"), ("b", "a")] {
        let h = b.atom("goal", t![r, "100"]);
        let l1 = b.lit("terminal", t![]);
        let l2 = b.lit("true", vec![f("control", t![o])]);
        b.rule(h, vec![l1, l2]);
        let h = b.atom("goal", t![r, "0"]);
        let l1 = b.lit("true", vec![f("control", t![r])]);
        let l2 = b.not("terminal", t![]);
        let or = Literal::Or(vec![l1, l2], Span::default());
        b.rule(h, vec![or]);
    }
    b.p
}

fn check(game: &RuleGame, moves: &[&str], facts: &str, legal_a: &str, terminal: bool) {
    let mut s = game.initial_state();
    for m in moves {
        let mv = game
            .parse_move(&s, game.mover(&s).unwrap_or(0), m)
            .expect("legal");
        s = game.play(&s, game.mover(&s).unwrap_or(0), &mv);
    }
    assert_eq!(game.state_facts(&s).join(" "), facts, "after {moves:?}");
    let mut buf = Vec::new();
    game.legal_moves(&s, 0, &mut buf);
    let legal: Vec<String> = buf.iter().map(|m| game.show_move(m)).collect();
    assert_eq!(legal.join(" "), legal_a, "after {moves:?}");
    assert_eq!(game.is_terminal(&s), terminal, "after {moves:?}");
}

#[test]
fn counter_game_plays_through_the_game_trait() {
    let game = RuleGame::from_program(&counter(), "counter").expect("loads");
    assert_eq!(game.info().roles, vec!["a", "b"]);
    assert_eq!(game.info().dynamics, crate::game::Dynamics::TurnTaking);
    check(&game, &[], "(control a) (step 0)", "inc", false);
    check(&game, &["inc"], "(control b) (step 1)", "noop", false);
    check(&game, &["inc", "inc"], "(control a) (step 2)", "inc", false);
    check(
        &game,
        &["inc", "inc", "inc"],
        "(control b) (step 3)",
        "noop",
        true,
    );
    assert_eq!(perft(&game, &game.initial_state(), 5), 1);
    let mut s = game.initial_state();
    for _ in 0..3 {
        s = game.play(
            &s,
            game.mover(&s).unwrap(),
            &game.move_from_kif("inc").unwrap(),
        );
    }
    assert_eq!(game.goal(&s, 0), 100, "a made the last move");
    assert_eq!(game.goal(&s, 1), 0);
    assert_eq!(game.mover(&game.initial_state()), Some(0));
}

#[test]
fn lowered_program_prints_as_rules() {
    let ir = lower(&counter()).expect("lowers");
    let text = ir.to_string();
    assert!(
        text.contains("legal(?r, inc) :- true(control(?r))."),
        "{text}"
    );
    assert!(
        text.contains("reach(?x, ?z) :- reach(?x, ?y), succ(?y, ?z)."),
        "{text}"
    );
    assert!(
        text.contains("goal(a, 0) :- ~terminal."),
        "or is expanded: {text}"
    );
    let p = plan(&ir, &[]).expect("plans");
    let shown = crate::datalog::plan::PlanDisplay {
        program: &ir,
        plan: &p,
    }
    .to_string();
    assert!(shown.contains("recursive: reach"), "{shown}");
    assert!(
        shown.contains("succ(?y, ?z)@[0]"),
        "the join looks succ up by its first column: {shown}"
    );
}

#[test]
fn runaway_recursion_stops_with_an_error() {
    let mut b = B::new(Syntax::Kif);
    b.fact("role", t!["a"]).fact("grow", t!["z"]);
    let h = b.atom("grow", vec![f("s", t!["?x"])]);
    let l = b.lit("grow", t!["?x"]);
    b.rule(h, vec![l]);
    // Unused relations are dropped at load, so the game must read `grow`.
    let h = b.atom("terminal", t![]);
    let l = b.lit("grow", t!["?x"]);
    b.rule(h, vec![l]);
    let limits = Limits {
        max_facts: 10_000,
        max_depth: 50,
        ..Limits::default()
    };
    match RuleGame::with_limits(&b.p, "grow", limits) {
        Err(EngineError::Runaway(why)) => assert!(why.to_string().contains("50"), "{why}"),
        Err(e) => panic!("wrong error {e}"),
        Ok(_) => panic!("a runaway program must not load"),
    }
}

#[test]
fn load_time_relations_too_large_in_full_run_demand_driven() {
    // `beyond` (the transitive closure of a 40-step `succ`) has 820 facts, over the limit, but the
    // terminal test only asks what lies beyond 2: restricted to that question the game loads.
    let mut src = String::from(
        "(role r) (init (at 0)) \
         (<= (legal r (go ?y)) (true (at ?x)) (succ ?x ?y)) \
         (<= (next (at ?y)) (does r (go ?y))) \
         (<= (beyond ?x ?y) (succ ?x ?y)) \
         (<= (beyond ?x ?z) (succ ?x ?y) (beyond ?y ?z)) \
         (<= terminal (true (at ?x)) (beyond 2 ?x)) \
         (<= (goal r 100) (true (at 3))) \
         (<= (goal r 0) (not (true (at 3))))",
    );
    for i in 0..40 {
        src.push_str(&format!(" (succ {i} {})", i + 1));
    }
    let p = crate::syntax::parse_kif(&src).expect("parses");
    let limits = Limits {
        max_facts: 500,
        ..Limits::default()
    };
    match RuleGame::with_options(&p, "beyond", limits, Evaluation::BottomUp) {
        Err(EngineError::Runaway(_)) => {}
        Err(e) => panic!("wrong error {e}"),
        Ok(_) => panic!("bottom-up, `beyond` in full exceeds the limit"),
    }
    let g = RuleGame::with_limits(&p, "beyond", limits).expect("loads demand-driven");
    assert!(g.uses_demand());
    // Three moves reach (at 3), the first state beyond 2.
    let s = g.initial_state();
    assert_eq!((perft(&g, &s, 3), perft(&g, &s, 6)), (1, 1));
    let (mut s, mut moves) = (s, Vec::new());
    for _ in 0..3 {
        assert!(!g.is_terminal(&s));
        g.legal_moves(&s, 0, &mut moves);
        assert_eq!(moves.len(), 1);
        s = g.next_state(&s, &moves);
    }
    assert!(g.is_terminal(&s));
    assert_eq!(g.goal(&s, 0), 100);
}

#[test]
fn a_static_prefix_with_more_answers_than_the_fact_limit_still_plays() {
    // `terminal` reads 1,600 pairs of load-time `n` facts before the state (planned
    // `terminal :- n(?a), n(?b), true$cell(p(?a, ?b))`): its static prefix has more answers than the
    // 1,000 facts a state may derive, which are not facts and do not count.
    let mut src = String::from(
        "(role r) (init (cell (p 100 100))) (init (cell (p 101 101))) (init (cell (p 102 102))) \
         (<= (legal r wait) (true (cell ?c))) (<= (next (cell (p 3 4))) (true (cell ?c))) \
         (<= terminal (n ?a) (n ?b) (true (cell (p ?a ?b)))) \
         (<= (goal r 100) terminal) (<= (goal r 0) (not terminal))",
    );
    for i in 0..40 {
        src.push_str(&format!(" (n {i})"));
    }
    let p = crate::syntax::parse_kif(&src).expect("parses");
    let limits = Limits {
        max_facts: 1000,
        ..Limits::default()
    };
    let g = RuleGame::with_options(&p, "pairs", limits, Evaluation::BottomUp).expect("loads");
    let s = g.initial_state();
    assert!(!g.is_terminal(&s));
    let mut moves = Vec::new();
    g.legal_moves(&s, 0, &mut moves);
    let s = g.next_state(&s, &moves);
    assert!(g.is_terminal(&s));
    assert_eq!(g.goal(&s, 0), 100);
}

#[test]
fn invalid_programs_are_rejected_with_a_reason() {
    let cases: Vec<(Program, &str)> = vec![
        {
            let mut b = B::new(Syntax::Kif);
            b.fact("role", t!["r"])
                .fact("foo", t!["bar"])
                .fact("foo", t!["bar", "bar"]);
            (b.p, "relation `foo`")
        },
        {
            let mut b = B::new(Syntax::Kif);
            b.fact("role", t!["r"])
                .fact("legal", vec![T::from("r"), f("a", t!["1"])])
                .fact("legal", vec![T::from("r"), f("a", t!["2", "3"])]);
            (b.p, "function `a`")
        },
        {
            let mut b = B::new(Syntax::Kif);
            b.fact("role", t!["r"]);
            let h = b.atom("p", t!["?x"]);
            let l = b.not("q", t!["?x"]);
            b.rule(h, vec![l]);
            let h = b.atom("terminal", t![]);
            let l = b.lit("p", t!["a"]);
            b.rule(h, vec![l]);
            (b.p, "unsafe")
        },
        {
            let mut b = B::new(Syntax::Kif);
            b.fact("role", t!["r"]);
            let h = b.atom("p", t![]);
            let l = b.not("p", t![]);
            b.rule(h, vec![l]);
            let h = b.atom("terminal", t![]);
            let l = b.lit("p", t![]);
            b.rule(h, vec![l]);
            (b.p, "not stratified")
        },
    ];
    for (p, want) in cases {
        match RuleGame::from_program(&p, "bad") {
            Err(e) => assert!(e.to_string().contains(want), "{e} should mention {want}"),
            Ok(_) => panic!("should be rejected: {want}"),
        }
    }
}

/// A per-state shortcut case: program, terminal, legal moves, next state, terminal after.
type ShortcutCase = (
    &'static str,
    bool,
    &'static [&'static str],
    &'static [&'static str],
    bool,
);

/// Games whose evaluation takes the per-state shortcuts (unfolded views, replayed load-time prefixes,
/// frame rules as a mask): each case gives whether the initial state is terminal, the first role's
/// legal moves there, the state after its first legal move, and whether that one is terminal.
#[test]
fn per_state_shortcuts_keep_the_meaning() {
    let cases: [ShortcutCase; 3] = [
        // A load-time prefix with no variable that fails (`same(b, a)` after unfolding `v`).
        (
            "(role r) (dom a) (dom b) (init (p b)) \
             (<= (v ?x) (dom ?x) (true (p ?x)) (not (distinct ?x a))) \
             (<= terminal (v b)) (<= (legal r go) (true (p b))) \
             (<= (next (p ?x)) (true (p ?x))) (<= (goal r 0) (true (p b)))",
            false,
            &["go"],
            &["(p b)"],
            false,
        ),
        // A chain of load-time facts replayed in every state, and a frame rule with a filter.
        (
            "(role r) (succ 1 2) (succ 2 3) (succ 3 4) \
             (init (c 1)) (init (c 2)) (init (c 3)) (init (k 1)) \
             (<= (run ?a) (succ ?a ?b) (succ ?b ?c) (true (c ?a)) (true (c ?b)) (true (c ?c))) \
             (<= terminal (run ?a) (true (c 4))) \
             (<= (legal r (add ?n)) (succ ?m ?n) (true (c ?m)) (not (true (c ?n)))) \
             (<= (next (c ?n)) (does r (add ?n))) \
             (<= (next (c ?n)) (true (c ?n)) (distinct ?n 1)) \
             (<= (next (k ?n)) (true (k ?n))) (<= (goal r 100) (run 1))",
            false,
            &["(add 4)"],
            &["(c 2)", "(c 3)", "(c 4)", "(k 1)"],
            true,
        ),
        // A view read with a constant and negated (unfolded, then split by De Morgan).
        (
            "(role r) (x 1) (x 2) (y 1) (y 2) (init (cell 1 1)) \
             (<= (open ?x ?y) (x ?x) (y ?y) (not (true (cell ?x ?y)))) \
             (<= (legal r (drop ?x)) (open ?x 2)) \
             (<= (next (cell ?x ?y)) (does r (drop ?x)) (y ?y) (not (open ?x ?y))) \
             (<= terminal (not (open 1 1))) (<= (goal r 0) (x 1))",
            true,
            &["(drop 1)", "(drop 2)"],
            &["(cell 1 1)"],
            true,
        ),
    ];
    for (src, terminal, legal, after, terminal_after) in cases {
        let program = crate::syntax::parse_kif(src).expect("parses");
        let g = RuleGame::from_program(&program, "t").expect("loads");
        let s = g.initial_state();
        assert_eq!(g.is_terminal(&s), terminal, "terminal for\n{src}");
        let mut moves = Vec::new();
        g.legal_moves(&s, 0, &mut moves);
        let shown: Vec<String> = moves.iter().map(|m| g.move_kif(*m).to_string()).collect();
        assert_eq!(shown, legal, "legal moves for\n{src}");
        let next = g.next_state(&s, &moves[..1]);
        assert_eq!(g.state_facts(&next), after, "next state for\n{src}");
        assert_eq!(
            g.is_terminal(&next),
            terminal_after,
            "terminal after for\n{src}"
        );
    }
}

#[test]
fn lowering_refuses_ors_that_multiply_past_the_limit_instead_of_filling_memory() {
    let game = |ors: usize| {
        let body = "(or (true (a)) (true (b))) ".repeat(ors);
        let src = format!(
            "(role r) (init (a)) (legal r go) (<= (next (a)) (true (a))) (goal r 100) \
             (<= terminal {body})"
        );
        crate::syntax::parse_str(&src, Syntax::Kif).expect("parses")
    };
    let ir = lower(&game(10)).expect("ten two-way ors lower");
    assert_eq!(ir.rules.iter().filter(|r| r.body.len() == 10).count(), 1024);
    match lower(&game(20)) {
        Err(EngineError::Invalid(crate::datalog::Invalid::TooManyTerms { at, limit })) => {
            assert_eq!(at, "terminal");
            assert_eq!(limit, crate::syntax::ast::MAX_EXPANDED_TERMS);
        }
        other => panic!(
            "expected too many conditions, got {:?}",
            other.map(|_| "a program")
        ),
    }
}

/// A game counting 0, 1, 2 in `s`, with the views `views` (KIF) and the goals and terminal after.
fn counting_with(views: &str, goals: &str) -> RuleGame {
    let src = format!(
        "(role r) (init (s 0)) (succ 0 1) (succ 1 2) (legal r go) \
         (<= (next (s ?y)) (true (s ?x)) (succ ?x ?y)) (<= (v0 ?x) (true (s ?x))) {views} {goals} \
         (<= terminal (true (s 2)))"
    );
    let p = crate::syntax::parse_str(&src, Syntax::Kif).expect("parses");
    RuleGame::from_program(&p, "views").expect("loads")
}

#[test]
fn a_chain_of_views_read_four_times_each_loads_without_multiplying_out() {
    // v1 reads v0 four times, v2 reads v1 four times, ...: unfolded all the way, the top's body
    // would hold 4^14 literals, each with variables of its own.
    let views: String = (1..=14)
        .map(|k| {
            let j = k - 1;
            format!(" (<= (v{k} ?x) (v{j} ?x) (v{j} ?y1) (v{j} ?y2) (v{j} ?y3))")
        })
        .collect();
    loads_and_scores_0(
        &views,
        "(<= (goal r 100) (v14 2)) (<= (goal r 0) (not (v14 2)))",
    );
}

/// The counting game with `rules` added loads, and its initial state, not terminal, scores 0.
fn loads_and_scores_0(rules: &str, goals: &str) {
    let game = counting_with(rules, goals);
    let s = game.initial_state();
    assert!(!game.is_terminal(&s));
    assert_eq!(game.goal(&s, 0), 0);
}

#[test]
fn a_chain_of_views_doubling_a_term_loads_without_multiplying_out() {
    // v1 passes v0 a term twice its argument's size, v2 passes v1 one, ...: unfolded all the way,
    // the reader's one literal would hold a term of 2^40 nodes.
    let views: String = (1..=40)
        .map(|k| format!(" (<= (v{k} ?x) (v{} (f ?x ?x)))", k - 1))
        .collect();
    loads_and_scores_0(
        &views,
        "(<= (goal r 100) (true (s 2))) (<= (goal r 0) (v40 1))",
    );
}

#[test]
fn a_negated_or_whose_alternatives_bind_different_variables_loads_and_keeps_its_meaning() {
    // As one relation of its own, `(true (winner none))` would be a rule that binds none of `?r`.
    let src = "(role x) (role o) (init (s 0)) (legal x go) (legal o go) \
               (<= (next (s 1)) (true (s 0))) (<= (next (winner x)) (true (s 0))) \
               (<= (goal ?r 100) (true (winner ?r))) \
               (<= (goal ?r 0) (role ?r) (not (or (true (winner ?r)) (true (winner none))))) \
               (<= terminal (true (s 1)))";
    let p = crate::syntax::parse_str(src, Syntax::Kif).expect("parses");
    assert!(
        crate::check::check(&p).errors.is_empty(),
        "check calls it valid"
    );
    let game = RuleGame::from_program(&p, "negated or").expect("loads");
    let s = game.initial_state();
    assert_eq!(
        (game.goal(&s, 0), game.goal(&s, 1)),
        (0, 0),
        "nobody has won"
    );
    let go = game.move_from_kif("go").expect("a move");
    let s = game.next_state(&s, &[go, go]);
    assert_eq!((game.goal(&s, 0), game.goal(&s, 1)), (100, 0), "x has won");
}

#[test]
fn lowering_refuses_a_rule_longer_than_the_join_takes() {
    let game = |n: usize| {
        let body: String = (0..n).map(|i| format!("(f{i}) ")).collect();
        let facts: String = (0..n).map(|i| format!("(f{i}) ")).collect();
        let src =
            format!("(role r) (init (a)) {facts} (<= (legal r go) {body}) (goal r 100) terminal");
        crate::syntax::parse_str(&src, Syntax::Kif).expect("parses")
    };
    let limit = crate::syntax::ast::MAX_RULE_CONDITIONS as usize;
    assert!(lower(&game(limit)).is_ok(), "a rule at the limit lowers");
    match lower(&game(limit + 1)) {
        Err(EngineError::Invalid(crate::datalog::Invalid::TooLongRule { at, .. })) => {
            assert_eq!(at, "legal");
        }
        other => panic!(
            "expected a rule too long, got {:?}",
            other.map(|_| "a program")
        ),
    }
}

#[test]
fn a_chain_of_long_views_read_once_each_is_not_unfolded_into_one_rule_past_the_limit() {
    // Each view adds 249 conditions of its own to the one below: unfolded all the way, the top's
    // rule would have 12,450 (planned in time cubic in its length: ten seconds to load).
    let facts: String = (1..=50)
        .flat_map(|k| (0..249).map(move |i| format!(" (c{k} {i})")))
        .collect();
    let views: String = (1..=50)
        .map(|k| {
            let conditions: String = (0..249).map(|i| format!(" (c{k} {i})")).collect();
            format!(" (<= (v{k} ?x) (v{} ?x){conditions})", k - 1)
        })
        .collect();
    let game = counting_with(
        &format!("{facts}{views}"),
        "(<= (goal r 100) (v50 2)) (<= (goal r 0) (not (v50 2)))",
    );
    let longest = game.program().rules.iter().map(|r| r.body.len()).max();
    let limit = crate::syntax::ast::MAX_RULE_CONDITIONS as usize;
    assert!(
        longest.is_some_and(|n| n <= limit),
        "a rule of {longest:?} conditions"
    );
    let s = game.initial_state();
    assert_eq!(game.goal(&s, 0), 0);
}
