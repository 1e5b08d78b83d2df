//! Greedy playouts on the network: decisive and anti-decisive moves, tried in the lanes of a word.
//!
//! Where one role has a choice of at most 64 moves, one pass plays each of them in a lane of its own
//! ([`NetGame::try_moves`]): a move that ends the game with goal 100 for it is played, and otherwise
//! moves are drawn at random until one leaves the next role to move without such a win. Trying a
//! move is a second call of the same kind on the state after it, whose lanes are then the next
//! step's: a move that passes costs nothing more, and only a move taken back costs a pass.
//!
//! Where several roles have a choice (simultaneous moves, each role at most 64), every role's move
//! is drawn, and each role with a choice plays all its moves in the lanes of a pass of its own, the
//! others playing their drawn moves ([`NetGame::try_role`]): a role with a move that ends the game
//! with goal 100 for it, against that draw and another, plays it. Otherwise the drawn joint move is tried the same way from the
//! state after it, and while a role would win there at once, the move of another role is drawn
//! again (its lanes are at hand), as long as that role has moves left: in
//! connectFourSimultaneous a drop that leaves the other role a line on the same board is taken
//! back. A step costs a pass per role with a choice, one more for each move taken back.

use rand::rngs::SmallRng;

use super::playout::{broadcast, Lanes};
use super::*;
use crate::game::{nth_set_bit, random_index};

impl NetGame {
    /// A greedy playout from `state` (see the module documentation); elsewhere (several roles with a
    /// choice, or more than 64 moves) a uniformly random joint move. Returns the last state and the
    /// number of joint moves played.
    pub(super) fn playout_greedy(
        &self,
        state: &BitState,
        rng: &mut SmallRng,
        max_steps: u32,
    ) -> (BitState, u32) {
        let n = &self.net;
        SCRATCH.with(|s| {
            let mut s = s.borrow_mut();
            self.start_pass(&mut s, state);
            let Scratch {
                vals,
                moves,
                saved,
                sim,
                ..
            } = &mut *s;
            saved.resize(n.num_nodes, 0);
            let mut steps = 0;
            // The lanes of the role to move, when the last step already tried them, and the lane of
            // `saved` that step played (its state, as `vals` has moved on to the trial).
            let mut tried: Option<(Option<usize>, usize, u64)> = None;
            let mut played = 0;
            // Whether `sim` holds the trials of the state in `vals` (a simultaneous step tried it).
            let mut carried = false;
            while steps < max_steps {
                let (mover, count, wins) = match tried.take() {
                    Some(t) => t,
                    None => {
                        if lit_val(vals, n.terminal) & 1 != 0 {
                            break;
                        }
                        let choice = match carried {
                            true => Err(Lanes::NoChoice),
                            false => self.try_moves(vals),
                        };
                        match choice {
                            Ok(t) => t,
                            Err(Lanes::NoChoice) => {
                                match self.simultaneous_step(vals, sim, carried, rng) {
                                    Ok(again) => carried = again,
                                    Err(Lanes::NoChoice) => {
                                        carried = false;
                                        if !self.random_step(vals, moves, rng) {
                                            break;
                                        }
                                    }
                                    Err(_) => break,
                                }
                                steps += 1;
                                continue;
                            }
                            Err(_) => break,
                        }
                    }
                };
                steps += 1;
                if wins != 0 || count == 1 {
                    // A win, or the one joint move when nobody has a choice (lane 0).
                    let lane = if wins != 0 { wins.trailing_zeros() } else { 0 };
                    broadcast(&mut vals[..n.num_nodes], lane);
                    continue;
                }
                // No win: draw moves until one leaves the next mover no win at once (the last one
                // left is played whatever it leaves).
                saved.copy_from_slice(&vals[..n.num_nodes]);
                let mut left = if count == 64 { !0 } else { (1u64 << count) - 1 };
                loop {
                    let lane = nth_set_bit(left, random_index(rng, left.count_ones() as usize));
                    left &= !(1 << lane);
                    broadcast(&mut vals[..n.num_nodes], lane);
                    if lit_val(vals, n.terminal) & 1 != 0 {
                        break;
                    }
                    match self.try_moves(vals) {
                        Ok((next, _, won)) if won != 0 && next != mover && left != 0 => {
                            vals[..n.num_nodes].copy_from_slice(saved);
                        }
                        Ok(t) => {
                            tried = Some(t);
                            played = lane;
                            break;
                        }
                        Err(_) => break,
                    }
                }
            }
            // Stopped by `max_steps` after a trial: the state is the one played, not a lane tried.
            let end = match tried {
                Some(_) => self.lane_state(saved, played),
                None => self.lane_state(vals, 0),
            };
            (end, steps)
        })
    }
}

/// The scratch of a greedy playout's simultaneous steps: for the state played from and the state
/// being tried after it, each role's drawn move, its number of moves, its trial's lanes (a node
/// vector per role) and the lanes of them that win for it.
pub(super) struct Simultaneous {
    now: Trials,
    after: Trials,
    /// Per role, the moves of the step not yet tried (lanes of its trial).
    left: Vec<u64>,
    spare: Spare,
}

/// Room to check a win against another draw of the other roles' moves.
struct Spare {
    picks: Vec<usize>,
    lanes: Vec<u64>,
}

struct Trials {
    picks: Vec<usize>,
    counts: Vec<usize>,
    lanes: Vec<u64>,
    wins: Vec<u64>,
}

impl Simultaneous {
    pub(super) const fn new() -> Self {
        const EMPTY: Trials = Trials {
            picks: Vec::new(),
            counts: Vec::new(),
            lanes: Vec::new(),
            wins: Vec::new(),
        };
        Simultaneous {
            now: EMPTY,
            after: EMPTY,
            left: Vec::new(),
            spare: Spare {
                picks: Vec::new(),
                lanes: Vec::new(),
            },
        }
    }
}

impl NetGame {
    /// One greedy step on `vals` (a state, its state part evaluated, lanes alike) where several
    /// roles have a choice (see the module documentation); `carried` says that `sim.now` already
    /// holds this state's trials. Plays the step into `vals` and returns whether `sim.now` then
    /// holds the trials of the state reached; [`Lanes::NoChoice`] (nothing played) where a role has
    /// more than 64 moves or fewer than two roles have a choice, [`Lanes::Stuck`] where a role has
    /// no move.
    pub(super) fn simultaneous_step(
        &self,
        vals: &mut [u64],
        sim: &mut Simultaneous,
        carried: bool,
        rng: &mut SmallRng,
    ) -> Result<bool, Lanes> {
        let size = vals.len();
        let nodes = self.net.num_nodes;
        if !carried {
            self.try_roles(vals, &mut sim.now, &mut sim.spare, rng)?;
        }
        let Trials {
            picks,
            counts,
            lanes,
            wins,
        } = &sim.now;
        if let Some(r) = wins.iter().position(|&w| w != 0) {
            // Every role with a win plays it (the first role's win must not hide the others').
            if wins.iter().filter(|&&w| w != 0).count() == 1 {
                vals[..nodes].copy_from_slice(&lanes[r * size..r * size + nodes]);
            } else {
                let Spare { picks: joint, .. } = &mut sim.spare;
                joint.clear();
                joint.extend(picks.iter().zip(wins).map(|(&p, &w)| match w {
                    0 => p,
                    w => w.trailing_zeros() as usize,
                }));
                self.try_role(vals, r, joint, counts[r]);
            }
            broadcast(&mut vals[..nodes], wins[r].trailing_zeros());
            return Ok(false);
        }
        sim.left.clear();
        sim.left
            .extend(counts.iter().zip(picks).map(|(&c, &p)| match c {
                0 | 1 => 0,
                64 => !(1u64 << p),
                c => ((1u64 << c) - 1) & !(1 << p),
            }));
        // The joint move drawn is any trial's lane of its role's drawn move.
        let mut role = counts.iter().rposition(|&c| c > 1).unwrap_or(0);
        let mut lane = picks[role];
        loop {
            let from = &sim.now.lanes[role * size..role * size + nodes];
            vals[..nodes].copy_from_slice(from);
            broadcast(&mut vals[..nodes], lane as u32);
            if lit_val(vals, self.net.terminal) & 1 != 0 {
                return Ok(false);
            }
            if self
                .try_roles(vals, &mut sim.after, &mut sim.spare, rng)
                .is_err()
            {
                // Not a simultaneous state, or a role is stuck: the next step finds out which.
                return Ok(false);
            }
            // A role with moves left whose move another role's win may answer, drawn at random
            // (so that no role's threats count before another's).
            let wins = &sim.after.wins;
            let threatened =
                |x: usize| sim.left[x] != 0 && (0..wins.len()).any(|o| o != x && wins[o] != 0);
            let candidates = (0..sim.left.len()).filter(|&x| threatened(x)).count();
            if candidates == 0 {
                std::mem::swap(&mut sim.now, &mut sim.after);
                return Ok(true);
            }
            let nth = random_index(rng, candidates);
            let x = (0..sim.left.len())
                .filter(|&x| threatened(x))
                .nth(nth)
                .unwrap_or(0);
            let left = sim.left[x];
            let pick = nth_set_bit(left, random_index(rng, left.count_ones() as usize));
            sim.left[x] &= !(1 << pick);
            (role, lane) = (x, pick as usize);
        }
    }

    /// Draws every role's move in `vals` (a state, lanes alike) and tries each role with a choice
    /// in a node vector of its own ([`NetGame::try_role`]), into `trials`. A move counts as a win
    /// only if it also wins against another draw of the other roles' moves: one that wins only
    /// because it sees what the others play (matching pennies) is no win.
    fn try_roles(
        &self,
        vals: &[u64],
        trials: &mut Trials,
        spare: &mut Spare,
        rng: &mut SmallRng,
    ) -> Result<(), Lanes> {
        let n = &self.net;
        let size = vals.len();
        let Trials {
            picks,
            counts,
            lanes,
            wins,
        } = trials;
        counts.clear();
        for r in 0..n.legal.len() {
            match self.legal_count(vals, r) {
                0 => return Err(Lanes::Stuck),
                c if c > 64 => return Err(Lanes::NoChoice),
                c => counts.push(c),
            }
        }
        if counts.iter().filter(|&&c| c > 1).count() < 2 {
            return Err(Lanes::NoChoice);
        }
        picks.clear();
        picks.extend(counts.iter().map(|&c| random_index(rng, c)));
        lanes.resize(size * counts.len(), 0);
        wins.clear();
        for (r, &count) in counts.iter().enumerate() {
            if count < 2 {
                wins.push(0);
                continue;
            }
            let t = &mut lanes[r * size..(r + 1) * size];
            t.copy_from_slice(vals);
            let mut won = self.try_role(t, r, picks, count);
            if won != 0 {
                spare.picks.clear();
                spare.picks.extend_from_slice(picks);
                let mut redrawn = false;
                for (o, &c) in counts.iter().enumerate() {
                    if o != r && c > 1 {
                        spare.picks[o] = (picks[o] + 1 + random_index(rng, c - 1)) % c;
                        redrawn = true;
                    }
                }
                if redrawn {
                    spare.lanes.resize(size, 0);
                    spare.lanes.copy_from_slice(vals);
                    won &= self.try_role(&mut spare.lanes, r, &spare.picks, count);
                }
            }
            wins.push(won);
        }
        Ok(())
    }

    /// Plays each of `role`'s `count` legal moves in `t` (a state, its state part evaluated, lanes
    /// alike) in a lane of its own, every other role playing its `picks`-th legal move in every lane;
    /// returns the lanes that end the game with goal 100 for `role`.
    fn try_role(&self, t: &mut [u64], role: usize, picks: &[usize], count: usize) -> u64 {
        let n = &self.net;
        self.set_inputs(t, |r, i| match (r == role, i == picks[r]) {
            (true, _) => 1 << i,
            (false, true) => !0,
            (false, false) => 0,
        });
        self.play_inputs(t);
        self.run_pass(Part::State, t);
        let all = if count == 64 { !0 } else { (1u64 << count) - 1 };
        let ended = lit_val(t, n.terminal) & all;
        if ended == 0 {
            return 0;
        }
        self.run_pass(Part::AllState, t);
        n.goals[role]
            .iter()
            .find(|(v, _)| *v == 100)
            .map_or(0, |&(_, won)| ended & lit_val(t, won))
    }
}
