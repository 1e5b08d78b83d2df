//! The kinds of player, what each needs of a game, and the one factory that builds them.
//!
//! **Whether a player can play a game is decided here, once**: [`PlayerKind::requirement`] says what a
//! kind needs, [`PlayerKind::check`] tests it against a game's [`GameInfo`] (naming the kinds that can
//! play it when it fails), and [`make_player`] refuses to build a player for a game it cannot play, so
//! every caller (a match, a tournament, a served session, a search from the command line) gets the same
//! answer.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

use super::clock::{role_seed, Progress};
use super::mcts::Switch;
use super::seeds::{SeedPlayer, SeedSearch, DEFAULT_FRACTION};
use super::{
    GreedyPlayer, IdPlayer, LearnedPlayer, LegalPlayer, McsPlayer, MctsPlayer, Player, RandomPlayer,
};
use crate::evaluators::Evaluator;
use crate::game::{Game, GameError, GameInfo, RoleIndex};
use crate::learn::Model;

/// The kinds of player the command line and the factory know.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PlayerKind {
    /// The first legal move.
    Legal,
    /// A seeded random legal move.
    Random,
    /// Depth-limited minimax (seed 1), deepened until the clock runs out.
    Minimax,
    /// Seed 3's alpha-beta, deepened until the clock runs out.
    AlphaBeta,
    /// Seed 3's Jamboree, deepened until the clock runs out.
    Jamboree,
    /// Iterative-deepening alpha-beta with a transposition table, for any game.
    Id,
    /// Monte Carlo search: random playouts after each move, best average.
    Mcs,
    /// Monte Carlo tree search (decoupled UCT with a solver), thinking in the start clock and while
    /// the other roles decide.
    Mcts,
    /// The same search as it was before it used every clock: a baseline to measure `mcts` against.
    Uct,
    /// Gamemaster's one-step lookahead: `id` limited to one move.
    OneStep,
    /// Gamemaster's two-step lookahead: `id` limited to two moves.
    TwoStep,
    /// Gamemaster's greedy player: the move whose next state has the best goal value.
    Greedy,
    /// Gamemaster's fixed-depth minimax: `id` limited to `--depth`.
    MinimaxDepth,
    /// Seed 2's learned player: the next state with the best learned score (`learned:FILE`).
    Learned,
}

/// What a kind of player needs of a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Requirement {
    /// Any game.
    Any,
    /// Two roles taking turns, zero-sum: the seeds' minimax family.
    TwoPlayerZeroSum,
    /// Two roles taking turns: seed 2's learner (one score, one role maximising it).
    TwoRolesTakingTurns,
}

impl PlayerKind {
    /// Every kind, in the order the help text lists them.
    pub const ALL: [PlayerKind; 14] = [
        PlayerKind::Legal,
        PlayerKind::Random,
        PlayerKind::Minimax,
        PlayerKind::AlphaBeta,
        PlayerKind::Jamboree,
        PlayerKind::Id,
        PlayerKind::Mcs,
        PlayerKind::Mcts,
        PlayerKind::Uct,
        PlayerKind::OneStep,
        PlayerKind::TwoStep,
        PlayerKind::Greedy,
        PlayerKind::MinimaxDepth,
        PlayerKind::Learned,
    ];

    /// The kind's name on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            PlayerKind::Legal => "legal",
            PlayerKind::Random => "random",
            PlayerKind::Minimax => "minimax",
            PlayerKind::AlphaBeta => "alphabeta",
            PlayerKind::Jamboree => "jamboree",
            PlayerKind::Id => "id",
            PlayerKind::Mcs => "mcs",
            PlayerKind::Mcts => "mcts",
            PlayerKind::Uct => "uct",
            PlayerKind::OneStep => "onestep",
            PlayerKind::TwoStep => "twostep",
            PlayerKind::Greedy => "greedy",
            PlayerKind::MinimaxDepth => "minimaxdepth",
            PlayerKind::Learned => "learned",
        }
    }

    /// Whether this kind takes switches (`mcts+mast`, see [`Switch`]).
    pub fn takes_switches(self) -> bool {
        matches!(self, PlayerKind::Mcts | PlayerKind::Uct)
    }

    /// Whether this kind takes `--depth`.
    pub fn searches(self) -> bool {
        matches!(
            self,
            PlayerKind::Minimax
                | PlayerKind::AlphaBeta
                | PlayerKind::Jamboree
                | PlayerKind::Id
                | PlayerKind::MinimaxDepth
        )
    }

    /// The seeds' search this kind plays (minimax, alpha-beta, Jamboree with `fraction`), which
    /// reproduces the seeds' traces.
    pub fn seed_search(self, fraction: f64) -> Option<SeedSearch> {
        match self {
            PlayerKind::Minimax => Some(SeedSearch::Minimax),
            PlayerKind::AlphaBeta => Some(SeedSearch::AlphaBeta),
            PlayerKind::Jamboree => Some(SeedSearch::Jamboree { fraction }),
            _ => None,
        }
    }

    /// What this kind needs of a game.
    pub fn requirement(self) -> Requirement {
        match self {
            PlayerKind::Minimax | PlayerKind::AlphaBeta | PlayerKind::Jamboree => {
                Requirement::TwoPlayerZeroSum
            }
            PlayerKind::Learned => Requirement::TwoRolesTakingTurns,
            _ => Requirement::Any,
        }
    }

    /// Whether this kind can play `info`'s game, and if not why.
    fn refusal(self, info: &GameInfo) -> Result<(), GameError> {
        match self.requirement() {
            Requirement::Any => Ok(()),
            Requirement::TwoPlayerZeroSum => info.require_two_player_zero_sum(self.as_str()),
            Requirement::TwoRolesTakingTurns => crate::learn::check_supported(info)
                .map_err(|e| GameError::Unsupported(e.to_string())),
        }
    }

    /// Checks that this kind can play `info`'s game; the error says why not and names the kinds that
    /// can.
    pub fn check(self, info: &GameInfo) -> Result<(), GameError> {
        self.refusal(info).map_err(|e| {
            let able: Vec<&str> = PlayerKind::ALL
                .into_iter()
                .filter(|k| k.requirement() != self.requirement() && k.refusal(info).is_ok())
                .map(PlayerKind::as_str)
                .collect();
            GameError::Unsupported(format!(
                "{e}. Players that can play it: {}",
                able.join(", ")
            ))
        })
    }
}

impl fmt::Display for PlayerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A player kind that does not exist.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown player `{0}`{hint}; known players: {known}", hint = hint(.0), known = known_players())]
pub struct UnknownPlayer(pub String);

/// `, did you mean `mcts`?` for a slip of the keyboard, in the kind or in a switch.
fn hint(word: &str) -> String {
    let word = word.trim();
    let guess = match word.split_once('+') {
        Some((kind, _))
            if kind
                .parse::<PlayerKind>()
                .is_ok_and(|k| !k.takes_switches()) =>
        {
            return " (only mcts and uct take switches)".to_string();
        }
        Some((kind, switches)) if kind.parse::<PlayerKind>().is_ok() => {
            let names = Switch::ALL.map(Switch::as_str);
            let mut fixed = kind.to_string();
            for s in switches.split('+') {
                let s = s.trim().to_ascii_lowercase();
                let known = Switch::ALL.iter().any(|k| k.as_str() == s);
                let name = if known {
                    Some(s.as_str())
                } else {
                    crate::diagnostics::did_you_mean(&s, names.iter().copied())
                };
                fixed.push('+');
                fixed.push_str(name.unwrap_or("?"));
            }
            (!fixed.contains('?') && !fixed.eq_ignore_ascii_case(word)).then_some(fixed)
        }
        _ => {
            let names = PlayerKind::ALL.map(PlayerKind::as_str);
            crate::diagnostics::did_you_mean(word, names.iter().copied().chain(["human"]))
                .map(str::to_string)
        }
    };
    guess
        .map(|k| format!(" (did you mean `{k}`?)"))
        .unwrap_or_default()
}

fn known_players() -> String {
    let kinds = PlayerKind::ALL
        .map(|k| match k {
            PlayerKind::Learned => "learned:FILE",
            k => k.as_str(),
        })
        .join(", ");
    let switches = Switch::ALL.map(|s| format!("+{}", s.as_str())).join(", ");
    format!("{kinds}; mcts and uct take switches: {switches} (e.g. `mcts+mast`)")
}

/// A player as the command line names it: a kind, for `learned:FILE` the file of learned scores, and
/// for the tree searches the enhancements switched on (`mcts+mast`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PlayerSpec {
    /// The kind.
    pub kind: PlayerKind,
    /// The scores file of a learned player.
    pub file: Option<PathBuf>,
    /// The switches on, sorted, each once (only `mcts` and `uct` take any).
    pub switches: Vec<Switch>,
}

impl From<PlayerKind> for PlayerSpec {
    fn from(kind: PlayerKind) -> Self {
        PlayerSpec {
            kind,
            file: None,
            switches: Vec::new(),
        }
    }
}

impl PlayerSpec {
    /// Whether `switch` is on.
    pub fn has(&self, switch: Switch) -> bool {
        self.switches.contains(&switch)
    }
}

impl fmt::Display for PlayerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.file {
            Some(p) => write!(f, "{}:{}", self.kind, p.display())?,
            None => write!(f, "{}", self.kind)?,
        }
        for s in &self.switches {
            write!(f, "+{}", s.as_str())?;
        }
        Ok(())
    }
}

impl FromStr for PlayerSpec {
    type Err = UnknownPlayer;

    /// A kind (`mcts`), a tree search with switches (`mcts+mast`), or `learned:FILE`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        match t.split_once(':') {
            Some((k, file)) if k.eq_ignore_ascii_case("learned") && !file.is_empty() => {
                return Ok(PlayerSpec {
                    kind: PlayerKind::Learned,
                    file: Some(PathBuf::from(file)),
                    switches: Vec::new(),
                });
            }
            _ => {}
        }
        let mut parts = t.split('+');
        let kind = parts.next().unwrap_or_default();
        let mut spec = PlayerSpec::from(
            kind.parse::<PlayerKind>()
                .map_err(|_| UnknownPlayer(s.to_string()))?,
        );
        for part in parts {
            let name = part.trim().to_ascii_lowercase();
            let switch = Switch::ALL
                .into_iter()
                .find(|k| k.as_str() == name)
                .filter(|_| spec.kind.takes_switches())
                .ok_or_else(|| UnknownPlayer(s.to_string()))?;
            spec.switches.push(switch);
        }
        spec.switches.sort();
        spec.switches.dedup();
        Ok(spec)
    }
}

impl FromStr for PlayerKind {
    type Err = UnknownPlayer;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_lowercase();
        let wanted = match wanted.as_str() {
            "ab" | "alpha-beta" => "alphabeta",
            "mm" => "minimax",
            // Gamemaster's iterative-deepening minimax is our `id`.
            "minimaxid" | "iterative-deepening" => "id",
            other => other,
        };
        PlayerKind::ALL
            .into_iter()
            .find(|k| k.as_str() == wanted)
            .ok_or_else(|| UnknownPlayer(s.to_string()))
    }
}

/// The settings a player is built with.
#[derive(Clone)]
pub struct PlayerConfig {
    /// Search depth in plies (the seeds' searches and `minimaxdepth`: the deepest iteration).
    pub depth: u32,
    /// The deepest iteration of `id`, when it is limited.
    pub id_depth: Option<u32>,
    /// Seed for random choices; each role's player gets its own seed derived from it ([`role_seed`]).
    pub seed: u64,
    /// Jamboree's sequential fraction.
    pub fraction: f64,
    /// Threads a Monte Carlo tree search runs on.
    pub threads: usize,
    /// Where a long search reports what it is doing, about once a second.
    pub progress: Option<Progress>,
    /// Scores files already read, by the path `learned:FILE` names: a tournament reads each once,
    /// before its first game, instead of once per game inside the start clock.
    pub models: Vec<(PathBuf, Arc<Model>)>,
}

impl fmt::Debug for PlayerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PlayerConfig")
            .field("depth", &self.depth)
            .field("id_depth", &self.id_depth)
            .field("seed", &self.seed)
            .field("fraction", &self.fraction)
            .field("threads", &self.threads)
            .field("progress", &self.progress.is_some())
            .field(
                "models",
                &self.models.iter().map(|(p, _)| p).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Default for PlayerConfig {
    fn default() -> Self {
        PlayerConfig {
            depth: 4,
            id_depth: None,
            seed: 1,
            fraction: DEFAULT_FRACTION,
            threads: 1,
            progress: None,
            models: Vec::new(),
        }
    }
}

/// Builds the player `spec` names for `role` of `game`, judging states by `evaluator` where it
/// searches to a horizon; refuses a game the player cannot play ([`PlayerKind::check`]).
pub fn make_player<G: Game>(
    spec: &PlayerSpec,
    role: RoleIndex,
    game: &G,
    config: &PlayerConfig,
    evaluator: Arc<dyn Evaluator<G>>,
) -> Result<Box<dyn Player<G>>, GameError> {
    let info = game.info();
    spec.kind.check(info)?;
    if role >= info.num_roles() {
        return Err(GameError::Unsupported(format!(
            "role {role} is not a role of `{}`",
            info.name
        )));
    }
    let seed = role_seed(config.seed, role);
    let progress = config.progress.clone();
    let depth = config.depth;
    Ok(match spec.kind {
        PlayerKind::Legal => Box::new(LegalPlayer),
        PlayerKind::Random => Box::new(RandomPlayer::new(seed)),
        PlayerKind::Minimax | PlayerKind::AlphaBeta | PlayerKind::Jamboree => {
            let search = spec.kind.seed_search(config.fraction).ok_or_else(|| {
                GameError::Unsupported(format!("{} is not a seed search", spec.kind))
            })?;
            Box::new(SeedPlayer::new(search, depth, evaluator))
        }
        PlayerKind::Id => {
            let id = IdPlayer::new(seed, evaluator).with_progress(progress);
            match config.id_depth {
                Some(depth) => Box::new(id.with_max_depth(depth)),
                None => Box::new(id),
            }
        }
        PlayerKind::MinimaxDepth => Box::new(
            IdPlayer::new(seed, evaluator)
                .limited("minimaxdepth", depth)
                .with_progress(progress),
        ),
        PlayerKind::OneStep => Box::new(
            IdPlayer::new(seed, evaluator)
                .limited("onestep", 1)
                .goals_only(),
        ),
        PlayerKind::TwoStep => Box::new(
            IdPlayer::new(seed, evaluator)
                .limited("twostep", 2)
                .goals_only(),
        ),
        PlayerKind::Greedy => Box::new(GreedyPlayer::new(seed)),
        PlayerKind::Mcs => Box::new(McsPlayer::new(seed).with_progress(progress)),
        PlayerKind::Mcts | PlayerKind::Uct => {
            Box::new(tree_search(spec, seed, config).with_progress(progress))
        }
        PlayerKind::Learned => Box::new(
            match config
                .models
                .iter()
                .find(|(path, _)| Some(path) == spec.file.as_ref())
            {
                Some((path, model)) => {
                    LearnedPlayer::with_model(path.clone(), Arc::clone(model), seed)
                }
                None => LearnedPlayer::new(spec.file.clone(), seed),
            },
        ),
    })
}

/// The tree search `spec` names (`mcts` or `uct`, with its switches), seeded by `seed`.
fn tree_search<G: Game>(spec: &PlayerSpec, seed: u64, config: &PlayerConfig) -> MctsPlayer<G> {
    let (player, defaults) = match spec.kind {
        // Blocking playouts won 30 of 32 against `uct` on breakthrough, cut playouts, where the
        // probe finds goals that predict the end, 11 of 16 checkers games, and capturing playouts,
        // where the piece probe finds pieces, 16 of 16 breakthrough games against `mcts` and 9-2-5
        // on checkers (see the README): `mcts` has all three; `uct` only when named.
        PlayerKind::Mcts => (MctsPlayer::new(seed), true),
        _ => (MctsPlayer::baseline(seed), false),
    };
    player
        .with_mast(spec.has(Switch::Mast))
        .with_nst(spec.has(Switch::Nst))
        .with_rave(spec.has(Switch::Rave))
        .with_grave(spec.has(Switch::Grave))
        .with_transpositions(spec.has(Switch::Trans))
        .with_decisive_playouts(spec.has(Switch::Decisive))
        .with_greedy_playouts(spec.has(Switch::Greedy))
        .with_lookahead(spec.has(Switch::Lookahead))
        .with_tuned(spec.has(Switch::Tuned))
        .with_normalization(spec.has(Switch::Norm))
        .with_detour(spec.has(Switch::Detour))
        .with_endings(spec.has(Switch::Endings))
        .with_saddles(spec.has(Switch::Saddle))
        .with_leaves(spec.has(Switch::Leaves))
        .with_winning_playouts(spec.has(Switch::Wins))
        .with_blocking_playouts(defaults || spec.has(Switch::Block))
        .with_cutoff(defaults || spec.has(Switch::Cutoff))
        .with_pieces(spec.has(Switch::Pieces))
        .with_captures(defaults || spec.has(Switch::Captures))
        .with_leaf_playouts(if spec.has(Switch::Batch) { 64 } else { 1 })
        .with_threads(config.threads)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluators::GoalsOnly;
    use crate::game::Dynamics;
    use crate::games::nim::Nim;

    #[test]
    fn a_misspelled_kind_gets_a_suggestion() {
        let e = "mtcs".parse::<PlayerKind>().unwrap_err().to_string();
        assert!(
            e.starts_with("unknown player `mtcs` (did you mean `mcts`?)"),
            "{e}"
        );
        let e = "chess".parse::<PlayerKind>().unwrap_err().to_string();
        assert!(e.starts_with("unknown player `chess`; known"), "{e}");
    }

    #[test]
    fn switches_follow_a_tree_search_and_misspelled_ones_get_a_suggestion() {
        for (text, expected) in [
            ("mcts+mast", Ok("mcts+mast")),
            ("UCT + MAST", Ok("uct+mast")),
            ("uct+mast+mast", Ok("uct+mast")),
            ("mcts+rave+mast", Ok("mcts+mast+rave")),
            ("mcts", Ok("mcts")),
            (
                "mcts+mats",
                Err("unknown player `mcts+mats` (did you mean `mcts+mast`?)"),
            ),
            (
                "mcs+mast",
                Err("unknown player `mcs+mast` (only mcts and uct take switches)"),
            ),
            ("mcts+", Err("unknown player `mcts+`;")),
        ] {
            let got = text.parse::<PlayerSpec>().map(|s| s.to_string());
            match (got, expected) {
                (Ok(spec), Ok(want)) => assert_eq!(spec, want),
                (Err(e), Err(want)) => {
                    let e = e.to_string();
                    assert!(e.starts_with(want), "{text}: {e}");
                    assert!(
                        e.contains("+mast, +nst, +rave, +grave, +batch, +trans, +decisive, +greedy, +lookahead, +wins, +block, +cutoff, +pieces, +captures, +tuned, +norm, +detour, +endings, +saddle, +leaves (e.g. `mcts+mast`)"),
                        "{e}"
                    );
                }
                (got, want) => panic!("{text}: {got:?}, expected {want:?}"),
            }
        }
        assert!("mcts+mast".parse::<PlayerSpec>().unwrap().has(Switch::Mast));
    }

    #[test]
    fn mcts_as_the_command_line_builds_it_blocks_cuts_and_captures_and_uct_runs_only_its_switches()
    {
        use crate::games::connect4::Connect4;
        use Switch::*;
        for (text, switches, name) in [
            ("mcts", &[Block, Cutoff, Captures][..], "mcts"),
            ("mcts+mast", &[Mast, Block, Cutoff, Captures], "mcts+mast"),
            (
                "mcts+batch+wins",
                &[Batch, Block, Cutoff, Captures],
                "mcts+batch",
            ),
            (
                "mcts+endings+detour",
                &[Block, Cutoff, Captures, Detour, Endings],
                "mcts+detour+endings",
            ),
            ("uct", &[], "uct"),
            ("uct+nst", &[Nst], "uct+nst"),
            ("uct+block", &[Block], "uct+block"),
            ("uct+wins", &[Wins], "uct+wins"),
            ("uct+cutoff+trans", &[Trans, Cutoff], "uct+trans+cutoff"),
            (
                "mcts+pieces",
                &[Block, Cutoff, Pieces, Captures],
                "mcts+pieces",
            ),
            ("uct+captures", &[Captures], "uct+captures"),
            (
                "uct+greedy+endings",
                &[Greedy, Endings],
                "uct+greedy+endings",
            ),
        ] {
            let spec: PlayerSpec = text.parse().unwrap();
            let player = tree_search::<Connect4>(&spec, 1, &PlayerConfig::default());
            assert_eq!(player.switches(), switches, "{text}");
            assert_eq!(
                player.thinks_ahead(),
                spec.kind == PlayerKind::Mcts,
                "{text}"
            );
            assert_eq!(Player::<Connect4>::name(&player), name, "{text}");
        }
    }

    #[test]
    fn the_factory_refuses_what_a_player_cannot_play() {
        let roshambo = GameInfo {
            name: "roshambo".into(),
            roles: vec!["a".into(), "b".into()],
            dynamics: Dynamics::Simultaneous,
            zero_sum: true,
        };
        let e = PlayerKind::AlphaBeta
            .check(&roshambo)
            .unwrap_err()
            .to_string();
        assert!(e.contains("roles move simultaneously"), "{e}");
        assert!(
            e.contains("Players that can play it: legal, random, id"),
            "{e}"
        );
        assert!(!e.contains("learned"), "{e}");
        let nim = Nim::new(5, false);
        for kind in PlayerKind::ALL {
            let built = make_player(
                &kind.into(),
                0,
                &nim,
                &PlayerConfig::default(),
                Arc::new(GoalsOnly),
            );
            assert!(built.is_ok(), "{kind} plays nim");
        }
    }
}
