//! Rule files at the edges of what the engines read, each played on both (the Datalog evaluator
//! and the network): perft counts the reference semantics give, or the network's refusal with its
//! reason. Found by a read of the engines against a reference evaluator written apart.

use ggp::engine::RuleGame;
use ggp::game::{perft, Game};
use ggp::network::NetGame;
use ggp::syntax::ast::Syntax;
use ggp::syntax::parse_str;

/// What the network does with a case: the perft count too, or a refusal that says this.
enum Network {
    Same,
    Refuses(&'static str),
}

/// Loads `text` on both engines and checks the perft count at `depth` (`network` says whether
/// the network plays it too).
fn check(name: &str, text: &str, syntax: Syntax, depth: u32, count: u64, network: Network) {
    let program = parse_str(text, syntax).unwrap_or_else(|e| panic!("{name}: {e:?}"));
    let rules = RuleGame::from_program(&program, name).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(
        perft(&rules, &rules.initial_state(), depth),
        count,
        "{name} on the Datalog evaluator"
    );
    match (NetGame::from_program(&program, name), network) {
        (Ok(net), Network::Same) => assert_eq!(
            perft(&net, &net.initial_state(), depth),
            count,
            "{name} on the network"
        ),
        (Err(e), Network::Refuses(why)) => {
            assert!(e.to_string().contains(why), "{name}: {e}")
        }
        (Ok(_), Network::Refuses(why)) => panic!("{name}: the network should refuse: {why}"),
        (Err(e), Network::Same) => panic!("{name}: the network refuses: {e}"),
    }
}

/// `(g ?x ?x)` nested on every step shares its subterms: 200 deep, it takes 200 terms of memory
/// and 2^200 characters of text. The network's analysis stops at 200 deep, and its message once
/// printed the whole term before keeping 60 characters: every command hung while memory grew.
#[test]
fn a_term_that_shares_its_subterms_is_refused_without_printing_it_whole() {
    let text = "(role r) (init (n z)) (<= (legal r go) (true (n ?x))) \
                (<= (next (n (g ?x ?x))) (true (n ?x))) \
                (<= terminal (true (n (g (g z z) (g z z))))) (goal r 100)";
    let network = Network::Refuses("(n (g (g (g");
    check("shared_subterms", text, Syntax::Kif, 3, 1, network);
}

/// A function term of 256 arguments: the 256th argument's place (index 255) is the mark the
/// index uses for a function symbol, and a lookup keyed by it found nothing on either engine.
#[test]
fn a_function_of_256_arguments_matches() {
    let args: Vec<String> = (0..256).map(|i| format!("a{i}")).collect();
    let vars: Vec<String> = (0..256).map(|i| format!("?v{i}")).collect();
    let text = format!(
        "(role r) (init s) (<= (next t) (true s)) (<= terminal (true t)) (goal r 100) \
         (w (f {})) (<= (legal r (go ?v255)) (w (f {})) (true s))",
        args.join(" "),
        vars.join(" ")
    );
    check("wide_function", &text, Syntax::Kif, 1, 1, Network::Same);
}

/// `05` is a term of its own: `plus(2, 3, 05)` is false, as the sum makes the term `5`, so its
/// negation holds. The negation once compared values and was false too: a move was lost.
#[test]
fn a_number_written_with_a_leading_zero_is_no_sum_and_its_negation_holds() {
    let text = "role(r)\nv(05)\ninit(s)\n\
                legal(r, pos) :- v(Z) & plus(2, 3, Z)\n\
                legal(r, neg) :- v(Z) & ~plus(2, 3, Z)\n\
                legal(r, wait) :- true(s)\n\
                next(t) :- true(s)\nterminal :- true(t)\ngoal(r, 100)";
    check("leading_zero", text, Syntax::Infix, 1, 2, Network::Same);
}
