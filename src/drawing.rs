//! A state drawn as data ([`Drawing`]): what [`crate::game::Game::drawing`] gives, the terminal prints
//! as text and the web page draws as SVG. The boards are found by [`crate::print::board`].

/// A state drawn as data: its boards as grids and every other fact as text, for the terminal
/// ([`Drawing::to_text`]) and the web page (which draws the grids as SVG).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Drawing {
    /// The boards, by the relation's name (and the part, for a relation of several boards).
    pub boards: Vec<Grid>,
    /// Every fact not drawn on a board, sorted, in the rules' own syntax.
    pub facts: Vec<String>,
}

/// One board of a [`Drawing`]: its rows from the top down, its columns from left to right, and what
/// stands on each square.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Grid {
    /// The relation's name, and the part for a relation of several boards (`cellHolds 1`).
    pub title: String,
    /// The rows' labels, in the game's own coordinates, from the top down.
    pub rows: Vec<String>,
    /// The columns' labels, from left to right.
    pub columns: Vec<String>,
    /// Per row, per column: what stands there, `None` for a blank or nothing.
    pub cells: Vec<Vec<Option<String>>>,
    /// Whether the columns' labels belong above the grid (a matrix, read from the top) rather than
    /// below it (a board whose second coordinate goes up).
    pub labels_on_top: bool,
    /// The widest value any square may hold, so that a drawing keeps its width as the game goes on.
    pub widest: usize,
}

impl Drawing {
    /// The drawing as text: each grid with its coordinates on its edges (titled when there are
    /// several), blank squares as `.`, then the other facts one per line.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let titled = self.boards.len() > 1;
        for grid in &self.boards {
            if titled {
                out.push_str(&grid.title);
                out.push_str(":\n");
            }
            out.push_str(&grid.to_text());
        }
        for f in &self.facts {
            out.push_str(f);
            out.push('\n');
        }
        out
    }
}

impl Grid {
    /// The grid as text (see [`Drawing::to_text`]).
    pub fn to_text(&self) -> String {
        let width = self
            .columns
            .iter()
            .map(|c| c.len())
            .chain([self.widest])
            .max()
            .unwrap_or(1);
        let margin = self.rows.iter().map(|r| r.len()).max().unwrap_or(1);
        let mut axis = format!("{:>margin$}  ", "");
        for x in &self.columns {
            axis.push_str(&format!(" {x:>width$}"));
        }
        let axis = axis.trim_end().to_string();
        let mut out = String::new();
        if self.labels_on_top {
            out.push_str(&axis);
            out.push('\n');
        }
        for (label, row) in self.rows.iter().zip(&self.cells) {
            let mut line = format!("{label:>margin$} |");
            for value in row {
                line.push_str(&format!(" {:>width$}", value.as_deref().unwrap_or(".")));
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        if !self.labels_on_top {
            out.push_str(&axis);
            out.push('\n');
        }
        out
    }
}
