//! A grounded network printed as readable equations, one per gate and output, for people and for
//! snapshot tests: base propositions by their KIF text, `does` inputs as `does(role, move)`, gates as
//! `nK`. A gate is the AND of its input literals; a negated gate prints as the OR of the complements
//! (De Morgan), which is how the compiler builds disjunctions.

use std::fmt;

use super::ground::{Grounded, NetLit};

impl Grounded {
    fn node_name(&self, node: usize, names: &[Option<String>]) -> String {
        match names.get(node) {
            Some(Some(name)) => name.clone(),
            _ if node == 0 => "false".to_string(),
            _ => format!("n{node}"),
        }
    }

    fn lit_text(&self, l: NetLit, names: &[Option<String>]) -> String {
        let node = (l >> 1) as usize;
        let negated = l & 1 == 1;
        match (node, negated) {
            (0, false) => "false".to_string(),
            (0, true) => "true".to_string(),
            (_, false) => self.node_name(node, names),
            (_, true) => format!("~{}", self.node_name(node, names)),
        }
    }

    /// Names for the input nodes: propositions and `does` inputs.
    fn input_names(&self) -> Vec<Option<String>> {
        let mut names = vec![None; self.first_gate];
        for (p, t) in self.props.iter().enumerate() {
            if let Some(slot) = names.get_mut(1 + p) {
                *slot = Some(self.terms.infix(*t));
            }
        }
        for (r, outs) in self.legal.iter().enumerate() {
            let role = self.terms.infix(self.roles[r]);
            for o in outs {
                if let (Some(slot), Some(m)) = (
                    names.get_mut(o.does as usize),
                    self.moves.get(o.mv as usize),
                ) {
                    *slot = Some(format!("does({role}, {})", self.terms.infix(*m)));
                }
            }
        }
        names
    }
}

impl fmt::Display for Grounded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = self.input_names();
        let does = names
            .iter()
            .skip(1 + self.props.len())
            .filter(|n| n.is_some())
            .count();
        writeln!(
            f,
            "% {} propositions, {} does inputs, {} gates ({} before the move, {} after)",
            self.props.len(),
            does,
            self.gates.len(),
            self.state_gates,
            self.gates.len() - self.state_gates
        )?;
        for (i, g) in self.gates.iter().enumerate() {
            if i == self.state_gates {
                writeln!(f, "% after the move")?;
            }
            let ins = self
                .inputs
                .get(g.start as usize..g.end as usize)
                .unwrap_or(&[]);
            let node = self.first_gate + i;
            let body = if g.negate == 0 {
                if ins.is_empty() {
                    "true".to_string()
                } else {
                    let parts: Vec<String> =
                        ins.iter().map(|&l| self.lit_text(l, &names)).collect();
                    parts.join(" & ")
                }
            } else if ins.is_empty() {
                "false".to_string()
            } else {
                let parts: Vec<String> =
                    ins.iter().map(|&l| self.lit_text(l ^ 1, &names)).collect();
                parts.join(" | ")
            };
            writeln!(f, "n{node} = {body}")?;
        }
        for (r, outs) in self.legal.iter().enumerate() {
            let role = self.terms.infix(self.roles[r]);
            for o in outs {
                let mv = self
                    .moves
                    .get(o.mv as usize)
                    .map_or_else(|| format!("?{}", o.mv), |m| self.terms.infix(*m));
                writeln!(f, "legal({role}, {mv}) = {}", self.lit_text(o.lit, &names))?;
            }
        }
        for (p, l) in self.next.iter().enumerate() {
            writeln!(
                f,
                "next({}) = {}",
                self.terms.infix(self.props[p]),
                self.lit_text(*l, &names)
            )?;
        }
        writeln!(f, "terminal = {}", self.lit_text(self.terminal, &names))?;
        for (r, goals) in self.goals.iter().enumerate() {
            let role = self.terms.infix(self.roles[r]);
            for (v, l) in goals {
                writeln!(f, "goal({role}, {v}) = {}", self.lit_text(*l, &names))?;
            }
        }
        Ok(())
    }
}
