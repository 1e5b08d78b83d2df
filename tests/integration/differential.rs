//! Differential tests: the rule games in `games/*.gdl` (and their KIF translations by the front end's
//! converter) against their native twins. Perft counts must match, and over 1000 seeded random playouts
//! per game both must agree at every step on the terminal flag, every role's legal moves (compared as
//! text after normalising notation), the state (the native state mapped to the facts the rules should
//! hold) and, at the end, every role's goal.

use std::collections::BTreeSet;
use std::path::Path;

use ggp::engine::RuleGame;
use ggp::game::{normalize_move_text, perft, Game};
use ggp::games::{connect4::Connect4, nim::Nim, tictactoe::TicTacToe};
use ggp::print::{convert, to_kif};
use ggp::syntax::ast::Syntax;
use ggp::syntax::{parse_file, parse_kif};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Which notation of the rule game: the `.gdl` file itself, or its KIF translation.
#[derive(Clone, Copy, Debug)]
enum Form {
    Infix,
    Kif,
}

fn rule_game(file: &str, form: Form) -> RuleGame {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("games")
        .join(file);
    let (prog, _) = parse_file(&path).unwrap_or_else(|_| panic!("{file} parses"));
    match form {
        Form::Infix => RuleGame::from_program(&prog, file).expect("loads"),
        Form::Kif => {
            let classic = convert(&prog, Syntax::Kif).expect("converts");
            let text = to_kif(&classic);
            let kif = parse_kif(&text).unwrap_or_else(|d| panic!("{file} as KIF: {d:?}\n{text}"));
            RuleGame::from_program(&kif, file).expect("the KIF translation loads")
        }
    }
}

/// The facts (KIF text) that a native state should correspond to, and a native move's text in the rule
/// game's vocabulary.
trait Twin: Game {
    fn facts(&self, state: &Self::State) -> BTreeSet<String>;
    fn move_text(&self, mv: &Self::Move) -> String {
        normalize_move_text(&self.show_move(mv))
    }
}

/// `cell(R,C,x|o|b)` from the native grid and `control` from the piece counts.
impl Twin for TicTacToe {
    fn facts(&self, state: &Self::State) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let (mut xs, mut os) = (0, 0);
        // The drawing: a line of column numbers, then `R | x . o` for each row.
        for (r, line) in self.show_state(state).lines().skip(1).enumerate() {
            let cells = line.split_once('|').map_or("", |(_, cells)| cells);
            for (c, ch) in cells.split_whitespace().enumerate() {
                let v = match ch {
                    "x" => {
                        xs += 1;
                        "x"
                    }
                    "o" => {
                        os += 1;
                        "o"
                    }
                    _ => "b",
                };
                out.insert(format!("(cell {} {} {v})", r + 1, c + 1));
            }
        }
        out.insert(format!("(control {})", if xs == os { "x" } else { "o" }));
        out
    }
}

impl Twin for Nim {
    fn facts(&self, state: &Self::State) -> BTreeSet<String> {
        // "N piece(s) left, ROLE to move"
        let text = self.show_state(state);
        let words: Vec<&str> = text.split_whitespace().collect();
        BTreeSet::from([
            format!("(pile {})", words[0]),
            format!("(control {})", words[3]),
        ])
    }
    fn move_text(&self, mv: &Self::Move) -> String {
        match self.show_move(mv).as_str() {
            "noop" => "noop".into(),
            k => format!("take {k}"),
        }
    }
}

/// `cell(Col,Row,red|black)` for the occupied cells (rows counted from the bottom), `control` from counts.
impl Twin for Connect4 {
    fn facts(&self, state: &Self::State) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let (mut red, mut black) = (0, 0);
        let text = self.show_state(state);
        let rows: Vec<&str> = text.lines().take(self.rows() as usize).collect();
        for (i, line) in rows.iter().enumerate() {
            let row = rows.len() - i;
            // `R | . R B ...`: the row number, then the cells.
            let cells = line.split_once('|').map_or("", |(_, cells)| cells);
            for (c, ch) in cells.split_whitespace().enumerate() {
                let p = match ch {
                    "R" => {
                        red += 1;
                        "red"
                    }
                    "B" => {
                        black += 1;
                        "black"
                    }
                    _ => continue,
                };
                out.insert(format!("(cell {} {row} {p})", c + 1));
            }
        }
        out.insert(format!(
            "(control {})",
            if red == black { "red" } else { "black" }
        ));
        out
    }
}

/// Each role's legal moves, sorted by their normalised text, with the texts.
fn native_legal<G: Twin>(g: &G, s: &G::State, role: usize) -> (Vec<G::Move>, Vec<String>) {
    let mut ms = Vec::new();
    g.legal_moves(s, role, &mut ms);
    let mut v: Vec<(String, G::Move)> = ms.into_iter().map(|m| (g.move_text(&m), m)).collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    let texts = v.iter().map(|x| x.0.clone()).collect();
    (v.into_iter().map(|x| x.1).collect(), texts)
}

fn rule_legal(
    g: &RuleGame,
    s: &ggp::engine::BitState,
    role: usize,
) -> (Vec<ggp::engine::RuleMove>, Vec<String>) {
    let mut ms = Vec::new();
    g.legal_moves(s, role, &mut ms);
    let mut v: Vec<(String, _)> = ms
        .into_iter()
        .map(|m| (normalize_move_text(&g.show_move(&m)), m))
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    let texts = v.iter().map(|x| x.0.clone()).collect();
    (v.into_iter().map(|x| x.1).collect(), texts)
}

/// Plays `playouts` seeded random games on both and compares them at every step.
fn differential<G: Twin>(native: &G, rule: &RuleGame, playouts: u32, what: &str) {
    assert_eq!(native.info().roles, rule.info().roles, "{what}: roles");
    let roles = native.info().num_roles();
    let mut rng = SmallRng::seed_from_u64(2024);
    for p in 0..playouts {
        let (mut ns, mut rs) = (native.initial_state(), rule.initial_state());
        for step in 0.. {
            let at = format!("{what}: playout {p} step {step}");
            let facts: BTreeSet<String> = rule.state_facts(&rs).into_iter().collect();
            assert_eq!(native.facts(&ns), facts, "{at}: state");
            let done = native.is_terminal(&ns);
            assert_eq!(done, rule.is_terminal(&rs), "{at}: terminal");
            if done {
                for r in 0..roles {
                    assert_eq!(
                        native.goal(&ns, r),
                        rule.goal(&rs, r),
                        "{at}: goal of role {r}"
                    );
                }
                break;
            }
            let mut nj = Vec::with_capacity(roles);
            let mut rj = Vec::with_capacity(roles);
            for r in 0..roles {
                let (nm, nt) = native_legal(native, &ns, r);
                let (rm, rt) = rule_legal(rule, &rs, r);
                assert_eq!(nt, rt, "{at}: legal moves of role {r}");
                let i = rng.gen_range(0..nm.len());
                nj.push(nm[i].clone());
                rj.push(rm[i]);
            }
            ns = native.next_state(&ns, &nj);
            rs = rule.next_state(&rs, &rj);
        }
    }
}

fn perft_check<G: Game>(g: &G, depth: u32, want: u64, what: &str) {
    assert_eq!(
        perft(g, &g.initial_state(), depth),
        want,
        "{what}: perft {depth}"
    );
}

#[test]
fn tictactoe_perft_9() {
    let native = TicTacToe::new(3, 3).unwrap();
    perft_check(&native, 9, 255168, "native tictactoe");
    for form in [Form::Infix, Form::Kif] {
        perft_check(
            &rule_game("tictactoe.gdl", form),
            9,
            255168,
            &format!("{form:?}"),
        );
    }
}

/// Depths 1 to 7 against the native game; 7 is the 823536 (about 8 s for both forms here).
#[test]
fn connect4_perft_1_to_7() {
    let native = Connect4::new(6, 7).unwrap();
    perft_check(&native, 7, 823536, "native connect4");
    let rule = rule_game("connect4.gdl", Form::Infix);
    let kif = rule_game("connect4.gdl", Form::Kif);
    for d in 1..=7 {
        let want = perft(&native, &native.initial_state(), d);
        perft_check(&rule, d, want, "connect4.gdl");
        perft_check(&kif, d, want, "connect4.gdl as KIF");
    }
}

#[test]
fn tictactoe_playouts() {
    let native = TicTacToe::new(3, 3).unwrap();
    for form in [Form::Infix, Form::Kif] {
        differential(
            &native,
            &rule_game("tictactoe.gdl", form),
            1000,
            &format!("tictactoe {form:?}"),
        );
    }
}

#[test]
fn nim_playouts() {
    let native = Nim::new(21, false);
    for form in [Form::Infix, Form::Kif] {
        differential(
            &native,
            &rule_game("nim.gdl", form),
            1000,
            &format!("nim {form:?}"),
        );
    }
}

#[test]
fn connect4_playouts() {
    let native = Connect4::new(6, 7).unwrap();
    for form in [Form::Infix, Form::Kif] {
        differential(
            &native,
            &rule_game("connect4.gdl", form),
            1000,
            &format!("connect4 {form:?}"),
        );
    }
}
