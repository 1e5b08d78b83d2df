//! What "the engines agree" means for one mutant past loading: `check`'s play-test, the network's
//! playout paths against each other and against the Datalog evaluator, the decisive move of the role in
//! control, and 64 lanes played at once. Each returns how much it compared, or what differed.

use std::time::{Duration, Instant};

use ggp::engine::{BitState, RuleGame, RuleMove};
use ggp::game::{guided_playout_by_moves, Game};
use ggp::load::{play_test, PlayTest, PlayTestReport};
use ggp::network::{NetGame, PlayoutMethod};
use rand::rngs::SmallRng;
use rand::SeedableRng;

use super::FAST_STEPS;
use crate::common::{datalog_playout, ByNumber};

/// `check`'s play-test (a few short matches) on both engines: the same matches, the same report, unless
/// the Datalog evaluator reports an error the network cannot (its deadline, say). Returns whether the
/// reports were compared, and whether they found a problem.
pub(super) fn play_tests_agree(
    p: &ggp::syntax::ast::Program,
    rule: &RuleGame,
    net: &NetGame,
    seed: u64,
) -> Result<(bool, bool), String> {
    let options = PlayTest {
        matches: 2,
        max_moves: 30,
        max_time: Duration::from_secs(3600),
        seed,
    };
    let said = |r: &PlayTestReport| {
        let problems: Vec<String> = r
            .problems
            .iter()
            .map(|d| {
                format!(
                    "{} at {}..{} ({:?})",
                    d.message, d.span.start, d.span.end, d.help
                )
            })
            .collect();
        (r.summary(), problems)
    };
    let (on_rules, on_net) = (play_test(p, rule, options), play_test(p, net, options));
    let evaluated = !on_rules
        .problems
        .iter()
        .any(|d| d.message.starts_with("the rules cannot be evaluated"));
    if evaluated && said(&on_rules) != said(&on_net) {
        return Err(format!(
            "play-test: datalog {:?}, network {:?}",
            said(&on_rules),
            said(&on_net)
        ));
    }
    Ok((evaluated, evaluated && !on_rules.problems.is_empty()))
}

/// The network's playout paths against each other and against the move methods: from the initial
/// state and from a state a few moves on, a random playout by a full pass and by propagation (each
/// way of playing a step: taking the joint move back or not, a turn by its writes or through the move
/// part), and a guided playout on the network's own loop against the same guide through the trait's
/// move methods, all ending in the same state after the same number of moves; from the initial state
/// also a playout on the Datalog evaluator drawing the same way (unless it reports an error, which the
/// network cannot). Returns the joint moves of the full-pass playouts.
pub(super) fn fast_paths_agree(
    rule: &RuleGame,
    net: &mut NetGame,
    seed: u64,
) -> Result<usize, String> {
    let initial = net.initial_state();
    let first = (seed % 5) as u32;
    let (on, _) = net.random_playout_with(
        PlayoutMethod::FullPass,
        &initial,
        &mut SmallRng::seed_from_u64(seed),
        first,
    );
    let mut moves = 0;
    for (from, start) in [("the initial state", &initial), ("a later state", &on)] {
        let random = |net: &NetGame, method| {
            let mut rng = SmallRng::seed_from_u64(seed);
            let (s, steps) = net.random_playout_with(method, start, &mut rng, FAST_STEPS);
            (net.state_facts(&s), steps)
        };
        // The network's own loop, or the trait's move methods.
        let guided = |net: &NetGame, by_moves: bool| {
            let (mut buf, mut numbers) = (Vec::new(), Vec::new());
            let mut rng = SmallRng::seed_from_u64(seed);
            let (rng, buf, numbers) = (&mut rng, &mut buf, &mut numbers);
            let (s, steps) = if by_moves {
                guided_playout_by_moves(net, start, rng, buf, numbers, FAST_STEPS, &mut ByNumber)
            } else {
                net.guided_playout(start, rng, buf, numbers, FAST_STEPS, &mut ByNumber)
            };
            (net.state_facts(&s), steps)
        };
        let full = random(net, PlayoutMethod::FullPass);
        moves += full.1 as usize;
        let by_moves = guided(net, true);
        for undo in [false, true] {
            for writes in [false, true] {
                net.set_step_undo(undo);
                net.set_turns_by_writes(writes);
                let how =
                    format!("from {from}, step undone {undo}, turns by their writes {writes}");
                let propagated = random(net, PlayoutMethod::Propagate);
                if propagated != full {
                    return Err(format!(
                        "random playout {how}: full pass {full:?}, propagation {propagated:?}"
                    ));
                }
                let fast = guided(net, false);
                if fast != by_moves {
                    return Err(format!(
                        "guided playout {how}: the move methods {by_moves:?}, the network's loop {fast:?}"
                    ));
                }
            }
        }
        if std::ptr::eq(start, &initial) {
            if let Ok(datalog) =
                datalog_playout(rule, &mut SmallRng::seed_from_u64(seed), FAST_STEPS)
            {
                if datalog != full {
                    return Err(format!(
                        "random playout from the initial state: network {full:?}, datalog {datalog:?}"
                    ));
                }
            }
        }
    }
    Ok(moves)
}

/// The network's decisive move for `role`, the role in control of the state `(rule's, net's)` (all 64
/// of its moves tried at once, one per bit of a word), against the first of its moves that the
/// Datalog evaluator finds ends the game with goal 100 for it, the other roles playing their first
/// legal moves (the first of `every` role's) as [`Game::play`] has them: whether there is one, or
/// `None` when not compared (a role with more than 64 moves, or a Datalog error on the way).
pub(super) fn decisive_agrees(
    rule: &RuleGame,
    net: &NetGame,
    (rs, ns): (&BitState, &BitState),
    role: usize,
    every: &[Vec<RuleMove>],
) -> Result<Option<bool>, String> {
    let mut moves = Vec::new();
    if rule.try_legal(rs, role, &mut moves).is_err() || moves.len() > 64 {
        return Ok(None);
    }
    let mut expected = None;
    for (i, &mv) in moves.iter().enumerate() {
        let mut joint: Vec<RuleMove> = every.iter().map(|m| m[0]).collect();
        joint[role] = mv;
        let Ok(after) = rule.try_next(rs, &joint) else {
            return Ok(None);
        };
        let Ok(terminal) = rule.try_terminal(&after) else {
            return Ok(None);
        };
        if !terminal {
            continue;
        }
        let Ok(goals) = rule.goal_values(&after, role) else {
            return Ok(None);
        };
        if goals.last() == Some(&100) {
            expected = Some(i);
            break;
        }
    }
    let mut buf = Vec::new();
    let got = net.decisive_move(ns, role, &mut buf);
    if got != expected {
        return Err(format!(
            "decisive move of role {role}: datalog {:?}, network {:?}",
            expected.map(|i| rule.move_kif(moves[i])),
            got.map(|i| net.move_kif(buf[i]))
        ));
    }
    Ok(Some(got.is_some()))
}

/// One step of 64 lanes at once on the network (`batch_playouts_each`, all from the state
/// `(rule's, net's)`), each lane drawing its own joint move: every lane moves, and ends with the goals
/// that one of the joint moves of `every` role's legal moves gives on the Datalog evaluator. Returns
/// the lanes compared (none where there are no roles, more than 64 joint moves, or a Datalog error).
pub(super) fn lanes_agree(
    rule: &RuleGame,
    net: &NetGame,
    (rs, ns): (&BitState, &BitState),
    every: &[Vec<RuleMove>],
    seed: u64,
) -> Result<usize, String> {
    let joints: usize = every.iter().map(Vec::len).product();
    if joints > 64 || every.is_empty() {
        return Ok(0);
    }
    let roles = every.len();
    let mut outcomes = Vec::new();
    for j in 0..joints {
        let (mut k, mut joint) = (j, Vec::new());
        for moves in every {
            joint.push(moves[k % moves.len()]);
            k /= moves.len();
        }
        let Ok(after) = rule.try_next(rs, &joint) else {
            return Ok(0);
        };
        let mut goals = Vec::new();
        for r in 0..roles {
            let Ok(values) = rule.goal_values(&after, r) else {
                return Ok(0);
            };
            goals.push(i64::from(values.last().copied().unwrap_or(0)));
        }
        outcomes.push(goals);
    }
    let mut goals = vec![-1; 64 * roles];
    let far = Instant::now() + Duration::from_secs(3600);
    let mut rng = SmallRng::seed_from_u64(seed);
    let steps = net.batch_playouts_each(64, &|_| ns, &mut rng, 1, &mut goals, far);
    if steps != Some(64) {
        return Err(format!(
            "64 lanes of one step each played {steps:?} joint moves"
        ));
    }
    for (lane, got) in goals.chunks(roles).enumerate() {
        if !outcomes.iter().any(|o| o == got) {
            return Err(format!(
                "lane {lane} of a step ended with goals {got:?}, which no joint move gives on \
                 datalog (they give {outcomes:?})"
            ));
        }
    }
    Ok(64)
}
