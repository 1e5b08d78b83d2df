//! Piece counts learnt in the start clock (`+pieces`): each new node of a duel starts with a few
//! simulations' worth of value from the material balance, as Sancho's piece heuristic does.
//!
//! In breakthrough or checkers a random playout says little about a capture; the count of each
//! side's pieces says a lot. The rules do not say which propositions are pieces, so a probe finds
//! them. Each base relation of three or four arguments, `(cellholds 3 4 white)`, is split by its
//! argument with the fewest values (2 to 12, and not two arguments tied at four or more, which are
//! a board's coordinates), each value's propositions forming a candidate set of six or more
//! (`white`'s and `black`'s squares). A board written with nested coordinates, `(cell (pos 3 4)
//! white)`, has two arguments and offers none. Random games from the state then show which sets
//! are pieces of whom: a set whose count stays the same on at least two turns in three (pieces are
//! taken now and then; a side's discs in Connect Four or reversi change on every one of its turns
//! and are left out) and whose count at the end correlates with a
//! role's final goal at r ≥ 0.06 (and more than with the other role's) belongs to that role. Both
//! roles need a set, and different ones.
//!
//! A new node's value is then seeded for the role that moved into it: with material `o` for it and
//! `t` for the other, `P = (o − t)/(o + t)`, the heuristic is `σ((o + t)/4 · (P − P_root))`, the
//! balance gained or lost since the root; the seed moves the root's mean reward for the role that
//! far towards 1 or 0, and counts as `w` visits (6 at equal material at the root, down to 2 as it tips:
//! the counts matter less once one side is far ahead). All of this is Sancho 1.61c's piece heuristic
//! (its "advanced" mode without its capture-sequence bookkeeping and per-piece-type weights), but
//! for one thing: Sancho also scales exploration by 0.7 where the heuristic is on, which here lost
//! 6–10 to `mcts` on breakthrough at 1 s where the prior alone drew 8–8; nor does it cut playouts
//! short and judge them by the balance, which after 8 moves lost 6–10 as well.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;

use super::stats::Pairs;
use crate::game::Game;

/// Random games the probe must finish before it chooses sets (fewer: no prior).
pub(super) const MIN_GAMES: usize = 100;

/// Random games the probe plays at most.
const MAX_GAMES: usize = 2_000;

/// Joint moves a probe game plays at most.
const MAX_GAME_STEPS: u32 = 1_000;

/// The fewest propositions a candidate set has.
const MIN_SET: usize = 6;

/// The most values an owner argument has (more: a board coordinate).
const MAX_OWNER_VALUES: usize = 12;

/// The correlation of a set's final count with a role's final goal that makes it the role's pieces.
const MIN_CORRELATION: f64 = 0.06;

/// A candidate piece set: the base propositions of one relation with one value at its owner
/// argument.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Candidate {
    /// `cellholds _ _ white`-style text for the progress report.
    pub(super) label: String,
    pub(super) mask: Vec<u64>,
}

/// Splits a KIF term `(f a (g b) c)` into its name and top-level arguments; `None` for an atom or
/// text that is not one term.
fn split_kif(text: &str) -> Option<(&str, Vec<&str>)> {
    let inner = text.trim().strip_prefix('(')?.strip_suffix(')')?;
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, None);
    for (i, c) in inner.char_indices() {
        match c {
            '(' => {
                if depth == 0 && start.is_none() {
                    start = Some(i);
                }
                depth += 1;
            }
            ')' => depth -= 1,
            c if c.is_whitespace() && depth == 0 => {
                if let Some(s) = start.take() {
                    parts.push(&inner[s..i]);
                }
            }
            _ => {
                if start.is_none() {
                    start = Some(i);
                }
            }
        }
        if depth < 0 {
            return None;
        }
    }
    if let Some(s) = start {
        parts.push(&inner[s..]);
    }
    if depth != 0 || parts.is_empty() {
        return None;
    }
    let name = parts.remove(0);
    Some((name, parts))
}

/// A proposition of a relation: its number and its arguments' text.
type Member<'a> = (usize, Vec<&'a str>);

/// The candidate piece sets of a game's base propositions (see the module documentation).
pub(super) fn candidates(props: &[String]) -> Vec<Candidate> {
    let words = props.len().div_ceil(64);
    // Per relation (name and arity): its propositions' numbers and arguments.
    let mut relations: Vec<(&str, usize, Vec<Member>)> = Vec::new();
    for (i, text) in props.iter().enumerate() {
        let Some((name, args)) = split_kif(text) else {
            continue;
        };
        if !(3..=4).contains(&args.len()) {
            continue;
        }
        match relations
            .iter_mut()
            .find(|(n, a, _)| *n == name && *a == args.len())
        {
            Some((_, _, members)) => members.push((i, args)),
            None => relations.push((name, args.len(), vec![(i, args)])),
        }
    }
    let mut out = Vec::new();
    for (name, arity, members) in relations {
        let values: Vec<Vec<&str>> = (0..arity)
            .map(|a| {
                let mut v: Vec<&str> = members.iter().map(|(_, args)| args[a]).collect();
                v.sort_unstable();
                v.dedup();
                v
            })
            .collect();
        let fewest = values.iter().map(Vec::len).min().unwrap_or(0);
        // Two arguments tied for fewest values, four or more each: both are board coordinates.
        let tied = values.iter().filter(|v| v.len() == fewest).count() > 1;
        if !(2..=MAX_OWNER_VALUES).contains(&fewest) || (tied && fewest >= 4) {
            continue;
        }
        let owner = values.iter().position(|v| v.len() == fewest).unwrap_or(0);
        for value in &values[owner] {
            let set: Vec<usize> = members
                .iter()
                .filter(|(_, args)| args[owner] == *value)
                .map(|&(i, _)| i)
                .collect();
            if set.len() < MIN_SET {
                continue;
            }
            let mut mask = vec![0u64; words];
            for i in set {
                mask[i / 64] |= 1 << (i % 64);
            }
            let label = (0..arity)
                .map(|a| if a == owner { *value } else { "_" })
                .collect::<Vec<_>>()
                .join(" ");
            out.push(Candidate {
                label: format!("({name} {label})"),
                mask,
            });
        }
    }
    out
}

fn count(mask: &[u64], words: &[u64]) -> u32 {
    mask.iter()
        .zip(words)
        .map(|(m, w)| (m & w).count_ones())
        .sum()
}

/// Each of two roles' pieces: the propositions whose count is its material.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Material {
    masks: [Vec<u64>; 2],
    /// The candidate sets merged into each mask, with their correlations, for the report.
    labels: [Vec<(String, f64)>; 2],
}

impl Material {
    /// Each role's pieces, as masks over a state's words.
    pub(super) fn masks(&self) -> &[Vec<u64>] {
        &self.masks
    }

    /// Both roles' piece counts in a state of these words.
    pub(super) fn counts(&self, words: &[u64]) -> [f64; 2] {
        [
            f64::from(count(&self.masks[0], words)),
            f64::from(count(&self.masks[1], words)),
        ]
    }
}

/// The material balance, for `role` (0 or 1), of counts `c`: (own − other)/(own + other).
fn balance(c: [f64; 2], role: usize) -> f64 {
    const EPSILON: f64 = 1e-6;
    let (own, other) = (c[role] + EPSILON, c[1 - role] + EPSILON);
    (own - other) / (own + other)
}

/// The heuristic value, 0..=1, for `role` of a state with counts `c`, beside the root's `root`.
pub(super) fn heuristic(c: [f64; 2], root: [f64; 2], role: usize) -> f64 {
    let scale = (c[0] + c[1]) / 4.0;
    let x = scale * (balance(c, role) - balance(root, role));
    1.0 / (1.0 + (-x).exp())
}

/// The visits a seed counts for, from the root's counts: 6 at equal material, at least 2.
pub(super) fn seed_weight(root: [f64; 2]) -> u32 {
    let average = (root[0] + root[1]) / 2.0;
    if average <= 0.0 {
        return 2;
    }
    let off = (root[0] - average).abs();
    (6.5 - off * 48.0 / average).max(2.0) as u32
}

/// A seed's value for a role whose mean reward at the root is `mean` over `visits`, and whose
/// heuristic value of the new node is `h`: the mean (shrunk towards a half while the root has few
/// visits) moved towards 1 or 0 as far as `h` lies from a half.
pub(super) fn seed_value(mean: f64, visits: u32, h: f64) -> f64 {
    let k = f64::from(visits) / 50.0;
    let base = (mean * k + 0.5) / (k + 1.0);
    if h > 0.5 {
        base + (1.0 - base) * (h - 0.5) * 2.0
    } else {
        base - base * (0.5 - h) * 2.0
    }
}

/// What the probe found.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Probe {
    /// Random games played to the end.
    pub(super) games: usize,
    /// Candidate sets looked at.
    pub(super) candidates: usize,
    /// The two roles' pieces, when both have a set.
    pub(super) material: Option<Material>,
}

impl Probe {
    /// One line for the progress report.
    pub(super) fn describe(&self, roles: &[String]) -> String {
        let Some(m) = &self.material else {
            return format!(
                "no piece counts (of {} candidate sets, none both seldom changed and telling one role's \
                 result for each role; {} random games)",
                self.candidates, self.games
            );
        };
        let side = |r: usize| {
            m.labels[r]
                .iter()
                .map(|(label, c)| format!("{label} r={c:.2}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let name = |r: usize| roles.get(r).map_or("?", String::as_str).to_string();
        format!(
            "pieces found ({}: {}; {}: {}; {} random games)",
            name(0),
            side(0),
            name(1),
            side(1),
            self.games
        )
    }
}

/// Per candidate set, what the probe's games showed.
#[derive(Clone, Default)]
struct Tally {
    /// Turns on which the count changed.
    changed: u64,
    /// The final count against each role's final goal.
    against: [Pairs; 2],
}

/// Plays random games of a two-role game from `from` until `deadline` (at most [`MAX_GAMES`]) and
/// chooses the roles' piece sets among `candidates` (see the module documentation). The clock is read
/// every 64 joint moves.
pub(super) fn probe<G: Game>(
    game: &G,
    from: &G::State,
    candidates: &[Candidate],
    rng: &mut SmallRng,
    deadline: Instant,
) -> Probe {
    let mut tallies = vec![Tally::default(); candidates.len()];
    let mut games = 0usize;
    let mut turns = 0u64;
    let mut buf = Vec::new();
    // The time of the last step: the next one is started only when one as long ends in time.
    let mut step = Duration::ZERO;
    let (mut before, mut after) = (vec![0u32; candidates.len()], vec![0u32; candidates.len()]);
    let counts = |state: &G::State, out: &mut [u32]| {
        let words = game.state_words(state);
        for (o, c) in out.iter_mut().zip(candidates) {
            *o = count(&c.mask, words);
        }
    };
    'games: while games < MAX_GAMES && !candidates.is_empty() {
        let mut state = from.clone();
        counts(&state, &mut before);
        let mut steps = 0u32;
        while !game.is_terminal(&state) && steps < MAX_GAME_STEPS {
            // The clock is read at every step, which costs little beside the counts: a step of
            // chess's network can take milliseconds, and the probe's window is tens of them.
            let now = Instant::now();
            if now + step >= deadline {
                break 'games;
            }
            let (next, n) = game.random_playout(&state, rng, &mut buf, 1);
            step = now.elapsed();
            if n == 0 {
                break;
            }
            state = next;
            steps += 1;
            turns += 1;
            counts(&state, &mut after);
            for (t, (b, a)) in tallies.iter_mut().zip(before.iter().zip(&after)) {
                t.changed += u64::from(a != b);
            }
            std::mem::swap(&mut before, &mut after);
        }
        games += 1;
        // The goals mean something at the end only: a game stopped short (too long, or stuck)
        // counts its turns but not its result.
        if !game.is_terminal(&state) {
            continue;
        }
        let goals = [
            f64::from(game.goal(&state, 0)),
            f64::from(game.goal(&state, 1)),
        ];
        for (t, &end) in tallies.iter_mut().zip(&before) {
            for (pairs, goal) in t.against.iter_mut().zip(goals) {
                pairs.add(f64::from(end), goal);
            }
        }
    }
    let material = (games >= MIN_GAMES)
        .then(|| choose(candidates, &tallies, turns))
        .flatten();
    Probe {
        games,
        candidates: candidates.len(),
        material,
    }
}

/// The roles' piece sets from the probe's tallies, when both roles have one and they differ.
fn choose(candidates: &[Candidate], tallies: &[Tally], turns: u64) -> Option<Material> {
    let words = candidates.first()?.mask.len();
    let mut masks = [vec![0u64; words], vec![0u64; words]];
    let mut labels: [Vec<(String, f64)>; 2] = [Vec::new(), Vec::new()];
    for (c, t) in candidates.iter().zip(tallies) {
        // Pieces are taken now and then, not on every turn of one side (a side's discs in Connect
        // Four change on half the turns, and would pass a test of one half).
        if turns == 0 || t.changed * 3 > turns {
            continue;
        }
        let r = [t.against[0].correlation(), t.against[1].correlation()];
        let (r0, r1) = (r[0].unwrap_or(-1.0), r[1].unwrap_or(-1.0));
        let (role, best) = if r0 >= r1 { (0, r0) } else { (1, r1) };
        if best < MIN_CORRELATION || r0 == r1 {
            continue;
        }
        for (m, w) in masks[role].iter_mut().zip(&c.mask) {
            *m |= w;
        }
        labels[role].push((c.label.clone(), best));
    }
    let empty = |m: &[u64]| m.iter().all(|&w| w == 0);
    if empty(&masks[0]) || empty(&masks[1]) || masks[0] == masks[1] {
        return None;
    }
    Some(Material { masks, labels })
}

/// The material prior of a tree (see the module documentation): the two roles' pieces, their counts at the root,
/// and the visits a seed counts for.
#[derive(Clone, Debug)]
pub(super) struct Prior {
    pub(super) material: Arc<Material>,
    pub(super) root: [f64; 2],
    pub(super) weight: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kif_terms_split_into_name_and_top_level_arguments() {
        let check = |text: &str, expected: Option<(&str, Vec<&str>)>| {
            assert_eq!(split_kif(text), expected, "{text}");
        };
        check("(cell 1 2 b)", Some(("cell", vec!["1", "2", "b"])));
        check(
            "(at (pos 1 2) white)",
            Some(("at", vec!["(pos 1 2)", "white"])),
        );
        check("( step  3 )", Some(("step", vec!["3"])));
        check("control", None);
        check("(cell 1 2", None);
        check("(a))(", None);
        check("(a) (b)", None);
    }

    fn props(texts: &[&str]) -> Vec<String> {
        texts.iter().map(|t| t.to_string()).collect()
    }

    #[test]
    fn candidate_sets_split_a_relation_by_its_argument_of_fewest_values() {
        // A 3×3 board of two colours: the colour argument has the fewest values, so each colour's
        // nine squares are a set; `control` and the 2-argument relation are no candidates.
        let mut texts = vec!["(control white)".to_string(), "(step 1 2)".to_string()];
        for x in 1..=3 {
            for y in 1..=3 {
                for colour in ["white", "black"] {
                    texts.push(format!("(cell {x} {y} {colour})"));
                }
            }
        }
        let sets = candidates(&texts);
        let labels: Vec<&str> = sets.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["(cell _ _ black)", "(cell _ _ white)"]);
        let black: Vec<usize> = (0..texts.len())
            .filter(|&i| sets[0].mask[i / 64] >> (i % 64) & 1 == 1)
            .collect();
        assert_eq!(black.len(), 9);
        assert!(black.iter().all(|&i| texts[i].ends_with("black)")));
    }

    #[test]
    fn board_coordinates_and_small_sets_are_no_pieces() {
        // Two coordinates of four values each tie for fewest: a board, not pieces.
        let mut square = Vec::new();
        for x in 1..=4 {
            for y in 1..=4 {
                square.push(format!("(mark {x} {y} {})", x * 10 + y));
            }
        }
        assert_eq!(candidates(&square), Vec::new());
        // Fewer than six propositions per value.
        let small = props(&["(p 1 1 a)", "(p 1 2 a)", "(p 2 1 b)", "(p 2 2 b)"]);
        assert_eq!(candidates(&small), Vec::new());
    }

    #[test]
    fn the_heuristic_is_even_at_the_roots_balance_and_leans_with_captures() {
        let root = [16.0, 16.0];
        assert!((heuristic(root, root, 0) - 0.5).abs() < 1e-9);
        let captured = [16.0, 15.0];
        let (h0, h1) = (heuristic(captured, root, 0), heuristic(captured, root, 1));
        assert!(h0 > 0.5 && h1 < 0.5 && (h0 + h1 - 1.0).abs() < 1e-9);
        assert_eq!(seed_weight(root), 6);
        assert_eq!(seed_weight([16.0, 8.0]), 2);
        // The seed keeps the root's mean at a half and leans it with the heuristic.
        assert!((seed_value(0.8, 1_000_000, 0.5) - 0.8).abs() < 1e-4);
        assert!((seed_value(0.8, 0, 0.5) - 0.5).abs() < 1e-12);
        assert!(seed_value(0.8, 1_000, h0) > 0.8 && seed_value(0.8, 1_000, h1) < 0.8);
    }
}
