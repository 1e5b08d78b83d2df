//! The roles: each declared once, and a warning for GDL-II's chance player.

use hashbrown::HashMap;

use super::Checker;
use crate::diagnostics::Diagnostic;
use crate::syntax::ast::{Span, Statement, Sym, Syntax, Term};
use crate::syntax::Keyword;

impl Checker<'_> {
    /// A role declared twice is an error (the game would have two seats of one name, and a move of
    /// either would be the other's); `legal` or `goal` of a name that is no role, and a role named
    /// `random`, get a warning in `warnings`.
    pub(super) fn role_warnings(&mut self, warnings: &mut Vec<Diagnostic>) {
        let mut first: HashMap<Sym, Span> = HashMap::new();
        for (name, span) in self.role_names() {
            if let Some(&earlier) = first.get(&name) {
                let role = self.name(name).to_string();
                self.errors.push(
                    Diagnostic::error(span, format!("the role `{role}` is declared twice"))
                        .with_label(earlier, "first declared here")
                        .with_help("remove one of them; each role is one seat of the game"),
                );
            } else {
                first.insert(name, span);
            }
        }
        // `legal` and `goal` of a name that is no role never apply: a misspelling, or a missing
        // `role` fact.
        let mut named: Vec<Sym> = Vec::new();
        for st in &self.p.statements {
            let Statement::Rule { head, .. } = st else {
                continue;
            };
            let (Some(k @ (Keyword::Legal | Keyword::Goal)), Some(Term::Const(r, span))) =
                (self.kw(head.pred), head.args.first())
            else {
                continue;
            };
            if head.args.len() == 2 && !first.contains_key(r) && !named.contains(r) {
                named.push(*r);
                let role = self.name(*r).to_string();
                warnings.push(
                    Diagnostic::warning(
                        *span,
                        format!("`{}` names `{role}`, which is not a role", k.name()),
                    )
                    .with_help(format!(
                        "declare it (`{}`) or correct the name",
                        self.role_fact(&role)
                    )),
                );
            }
        }
        if let Some(span) = self.random_role() {
            warnings.push(
                Diagnostic::warning(
                    span,
                    "a role named `random` is GDL-II's chance player, and GDL-II is not supported",
                )
                .with_help(
                    "the game is played as GDL: `random` is an ordinary role, and a player takes its \
                     seat (`--player random=random` plays it by chance)",
                ),
            );
        }
    }

    /// `role(name)` in the file's own syntax.
    fn role_fact(&self, name: &str) -> String {
        match self.p.syntax {
            Syntax::Infix => format!("role({name})"),
            Syntax::Kif => format!("(role {name})"),
        }
    }

    /// The roles declared by name, in order, where each is declared.
    fn role_names(&self) -> Vec<(Sym, Span)> {
        self.p
            .statements
            .iter()
            .filter_map(|st| match st {
                Statement::Rule { head, body, .. }
                    if body.is_empty()
                        && head.args.len() == 1
                        && self.kw(head.pred) == Some(Keyword::Role) =>
                {
                    match head.args.first() {
                        Some(Term::Const(r, span)) => Some((*r, *span)),
                        _ => None,
                    }
                }
                _ => None,
            })
            .collect()
    }

    /// Where the game declares a role named `random`, if it does.
    fn random_role(&self) -> Option<Span> {
        self.role_names()
            .into_iter()
            .find(|(r, _)| self.name(*r).eq_ignore_ascii_case("random"))
            .map(|(_, span)| span)
    }
}
