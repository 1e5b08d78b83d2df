//! Starting a rule game anywhere (`--state FILE`, `--moves "..."`, `--from RECORD`): the position is
//! reached, its facts replace the rules' `init` ([`ggp::load::position`]), and the game loaded from
//! those rules is what every command plays, searches or sends to remote players.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;

use ggp::game::Game;
use ggp::load::position::{with_initial_state, PositionError};
use ggp::load::{load, AnyGame, EngineChoice, GameSource, LoadOptions, Loaded, Visitor};
use ggp::protocol::record::MatchRecord;

use super::spec::{load_error, render_errors, while_loading};
use super::CliError;

/// Where a rule game starts, when not at its `init`.
#[derive(Args, Debug, Clone, Default, PartialEq, Eq)]
pub struct StartArgs {
    /// Rule files: start from the facts in FILE, KIF `(cell 1 1 x)` or infix `cell(1,1,x)`, instead of
    /// the rules' `init` (a "medias res" game, as ggp-base's player tester builds them).
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// Rule files: start after these moves (from the rules' start, or from --state, or after
    /// --from): steps separated by `;`, a simultaneous step's moves in role order joined by `&`, e.g.
    /// "mark(2,2); mark(1,1)" or "(rock) & (paper)".
    #[arg(long, value_name = "MOVES")]
    pub moves: Option<String>,
    /// Rule files: start where a match record (ggp-base JSON, from `play --out` or `match --out`)
    /// ends, or after its first --step steps.
    #[arg(long, value_name = "RECORD")]
    pub from: Option<PathBuf>,
    /// With --from: the number of the record's steps to replay [default: all].
    #[arg(
        long,
        allow_negative_numbers = true,
        value_name = "N",
        requires = "from"
    )]
    pub step: Option<usize>,
}

impl StartArgs {
    /// Whether a start other than the rules' `init` was asked for.
    pub fn given(&self) -> bool {
        self.state.is_some() || self.moves.is_some() || self.from.is_some()
    }
}

fn read(path: &Path) -> Result<String, CliError> {
    std::fs::read_to_string(path).map_err(|e| CliError::File {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// The steps of `--moves`: each a list of moves, one (the mover's) or one per role.
fn parse_moves(text: &str) -> Vec<Vec<String>> {
    text.split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|step| step.split('&').map(|m| m.trim().to_string()).collect())
        .collect()
}

/// Loads `source` started where `start` says (see the module documentation); `game` is the game as
/// its rules begin, already loaded.
pub fn started(
    game: AnyGame,
    source: &GameSource,
    options: &LoadOptions,
    start: &StartArgs,
) -> Result<AnyGame, CliError> {
    let name =
        match source {
            GameSource::RuleFile(path) => path
                .file_stem()
                .map_or_else(|| "game".into(), |s| s.to_string_lossy().into_owned()),
            GameSource::RuleText { name, .. } => name.clone(),
            _ => return Err(CliError::Usage(
                "--state, --moves and --from start rule files anywhere; a native game starts at \
                 its beginning (play its rule version, e.g. games/tictactoe.gdl, instead)"
                    .into(),
            )),
        };
    // Positions on the way are reached on the Datalog evaluator, which loads at once; the game
    // played is loaded as asked.
    let passing = LoadOptions {
        engine: EngineChoice::Datalog,
        ..*options
    };
    // The started rules are written in the syntax of the rules they come from.
    let syntax = game
        .rules()
        .map_or(ggp::syntax::ast::Syntax::Kif, |r| r.program.syntax);
    let reload = |text: String, options: &LoadOptions| {
        let source = GameSource::RuleText {
            text,
            name: name.clone(),
            syntax,
        };
        while_loading(&source, options, || load(&source, options))
            .map_err(|e| load_error(e, &source))
    };
    let mut steps: Vec<Vec<String>> = Vec::new();
    // The facts the game starts from instead of its `init`, and where they were read.
    let mut state: Option<(String, PathBuf)> = None;
    if let Some(path) = &start.from {
        if start.state.is_some() {
            return Err(CliError::Usage(
                "--from and --state both say where to start: give one".into(),
            ));
        }
        let record = MatchRecord::from_json(&read(path)?).map_err(|e| CliError::File {
            path: path.clone(),
            message: e.to_string(),
        })?;
        let roles = &game.info().roles;
        if let Some(theirs) = record.game_role_names.as_ref().filter(|r| *r != roles) {
            return Err(CliError::Usage(format!(
                "the record {} is of {} (roles {}), not of this game (roles {})",
                path.display(),
                record.game_name.as_deref().unwrap_or("another game"),
                theirs.join(", "),
                roles.join(", ")
            )));
        }
        let upto = start.step.unwrap_or(record.moves.len());
        if upto > record.moves.len() {
            return Err(CliError::Usage(format!(
                "--step {upto}: the record {} has {}",
                path.display(),
                ggp::diagnostics::count(record.moves.len(), "step")
            )));
        }
        // The record's first state, so that a record of a game started anywhere resumes too; its
        // moves are then replayed, which checks that the record is of this game.
        if let Some(first) = record.states.first() {
            let inner = first.trim();
            let inner = inner
                .strip_prefix('(')
                .and_then(|s| s.strip_suffix(')'))
                .unwrap_or(inner);
            state = Some((inner.to_string(), path.clone()));
        }
        steps.extend(record.moves[..upto].iter().cloned());
    }
    if let Some(moves) = &start.moves {
        steps.extend(parse_moves(moves));
    }
    if let Some(path) = &start.state {
        state = Some((read(path)?, path.clone()));
    }
    let mut game = game;
    if let Some((facts, path)) = state {
        let program = &game.rules().expect("a rule game has rules").program;
        let text =
            with_initial_state(program, &facts).map_err(|e| position_error(e, &path, &facts))?;
        let options = if steps.is_empty() { options } else { &passing };
        game = reload(text, options)?;
    }
    if steps.is_empty() {
        return Ok(game);
    }
    // A shared pointer: the game is consumed by the replay.
    let rules = Arc::clone(game.rules().expect("a rule game has rules"));
    let facts = game.visit(Replay(&steps))?;
    let text = with_initial_state(&rules.program, &facts.join("\n"))
        .map_err(|e| CliError::Failed(format!("the position reached cannot start a game: {e}")))?;
    reload(text, options)
}

fn position_error(e: PositionError, path: &Path, text: &str) -> CliError {
    match e {
        PositionError::Syntax(errors) => {
            CliError::Failed(render_errors(&errors, &path.display().to_string(), text))
        }
        other => CliError::Failed(format!("{}: {other}", path.display())),
    }
}

/// Plays the steps from the initial state; the facts of the state reached.
struct Replay<'a>(&'a [Vec<String>]);

impl Visitor for Replay<'_> {
    type Output = Result<Vec<String>, CliError>;

    fn visit<G: Game>(self, loaded: Loaded<G>) -> Result<Vec<String>, CliError> {
        let game = loaded.game.as_ref();
        let roles = &game.info().roles;
        let mut state = game.initial_state();
        let mut legal = Vec::new();
        for (i, step) in self.0.iter().enumerate() {
            let at = format!("step {} ({})", i + 1, step.join(" & "));
            if game.is_terminal(&state) {
                return Err(CliError::Usage(format!(
                    "{at}: the game is already over after {i} steps"
                )));
            }
            let mut joint = Vec::with_capacity(roles.len());
            for role in 0..roles.len() {
                let text = match (step.len(), game.mover(&state)) {
                    (n, _) if n == roles.len() => Some(step[role].as_str()),
                    (1, Some(mover)) if mover == role => Some(step[0].as_str()),
                    (1, Some(_)) => None,
                    (n, mover) => {
                        let one = match mover {
                            Some(m) => format!("the move of {} (whose turn it is), or ", roles[m]),
                            None => "(every role moves at once here) ".to_string(),
                        };
                        return Err(CliError::Usage(format!(
                            "{at}: {} given; give {one}{} moves in role order ({}) joined by `&`",
                            ggp::diagnostics::count(n, "move"),
                            roles.len(),
                            roles.join(", ")
                        )));
                    }
                };
                let mv = match text {
                    Some(text) => game
                        .parse_move(&state, role, text)
                        .map_err(|e| CliError::Usage(format!("{at}: {e}")))?,
                    None => {
                        legal.clear();
                        game.legal_moves(&state, role, &mut legal);
                        match legal.as_slice() {
                            [only] => only.clone(),
                            _ => {
                                return Err(CliError::Usage(format!(
                                "{at}: {} has a choice too; give every role's move joined by `&`",
                                roles[role]
                            )))
                            }
                        }
                    }
                };
                joint.push(mv);
            }
            state = game.next_state(&state, &joint);
        }
        Ok(game.state_kif(&state))
    }
}

#[cfg(test)]
mod tests {
    use super::parse_moves;

    #[test]
    fn moves_are_steps_of_one_move_or_one_per_role() {
        assert_eq!(
            parse_moves("mark(2,2); mark(1,1) ;"),
            vec![vec!["mark(2,2)".to_string()], vec!["mark(1,1)".to_string()]]
        );
        assert_eq!(
            parse_moves("(rock) & (paper)"),
            vec![vec!["(rock)".to_string(), "(paper)".to_string()]]
        );
    }
}
