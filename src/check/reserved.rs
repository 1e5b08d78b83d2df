//! Names a syntax reserves: KIF's connectives read as relations in infix, built-ins defined or made
//! true, and a KIF rule read as another's condition (its closing `)` missing).

use super::{is_builtin, Checker};
use crate::diagnostics::Diagnostic;
use crate::syntax::ast::{for_each_atom, Atom, Statement, Syntax};
use crate::syntax::Keyword;

impl Checker<'_> {
    /// Infix conditions `not(p)`, `or(p, q)`, `and(p, q)`, `<=(p, q)` read relations of those names,
    /// which no rule can define (they are reserved) and which KIF reads as its connectives: an error,
    /// since the author meant the connective, and a conversion would change the game. So is a rule
    /// or an effect that defines an arithmetic built-in (`plus(1, 1, 3)`), which conditions never read.
    pub(super) fn kif_connectives_read_as_relations(&mut self, st: &Statement) {
        let (conditions, defined): (_, Vec<&Atom>) = match st {
            Statement::Rule { head, body, .. } => (body, vec![head]),
            Statement::Operation {
                conditions,
                effects,
                ..
            } => (conditions, effects.iter().map(|e| &e.atom).collect()),
        };
        for a in defined {
            let name = self.name(a.pred);
            if is_builtin(name, Syntax::Infix) && self.kw(a.pred).is_none() {
                self.errors.push(
                    Diagnostic::error(
                        a.span,
                        format!("`{name}` is built in and cannot be defined or made true"),
                    )
                    .with_help("give the relation another name"),
                );
            }
        }
        for l in conditions {
            for_each_atom(l, false, &mut |a, _| {
                let (connective, instead) = match self.kw(a.pred) {
                    Some(Keyword::Not) => ("negation", "`~p`"),
                    Some(Keyword::Or) => ("a disjunction", "`p | q`"),
                    Some(Keyword::And) => ("a conjunction", "`p & q`"),
                    Some(Keyword::Implies) => ("a rule", "`head :- body`"),
                    _ => return,
                };
                self.errors.push(
                    Diagnostic::error(
                        a.span,
                        format!(
                            "`{}` is KIF's keyword for {connective}, not a relation",
                            self.name(a.pred)
                        ),
                    )
                    .with_help(format!("in infix write {connective} as {instead}")),
                );
            });
        }
    }

    /// A KIF rule whose closing `)` is missing takes the next rule in as one of its conditions, an
    /// atom of a relation named `<=` that nothing defines: said as what it most likely is.
    pub(super) fn rules_inside_rules(&mut self, st: &Statement) {
        let Statement::Rule { body, .. } = st else {
            return;
        };
        for l in body {
            for_each_atom(l, false, &mut |a, _| {
                if self.kw(a.pred) == Some(Keyword::Implies) {
                    self.errors.push(
                        Diagnostic::error(
                            a.span,
                            "a rule inside a rule: `<=` cannot be a condition",
                        )
                        .with_help(
                            "the rule before it probably lacks its closing `)`: close it, and \
                                 this one becomes a rule of its own",
                        ),
                    );
                }
            });
        }
    }
}
