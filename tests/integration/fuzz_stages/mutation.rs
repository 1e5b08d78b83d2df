//! The mutator of the pipeline fuzz: programs cut into tokens as each syntax's lexer cuts them
//! (parentheses and atoms in KIF; names, variables, strings and punctuation in infix), one random
//! mutation at a time, and printed back as text. The mutations and why they are chosen so are in the
//! parent module's documentation.

use rand::rngs::SmallRng;
use rand::Rng;

/// KIF tokens: parentheses and atoms (comments dropped).
pub(super) fn tokens(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in src.lines() {
        let line = line.split(';').next().unwrap_or("");
        let mut atom = String::new();
        for c in line.chars() {
            if c == '(' || c == ')' || c.is_whitespace() {
                if !atom.is_empty() {
                    out.push(std::mem::take(&mut atom));
                }
                if !c.is_whitespace() {
                    out.push(c.to_string());
                }
            } else {
                atom.push(c);
            }
        }
        if !atom.is_empty() {
            out.push(atom);
        }
    }
    out
}

/// The token ranges of the forms at `depth` (0: top-level statements; 1: a rule's head and literals).
fn forms(t: &[String], depth: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut d = 0usize;
    let mut start = 0;
    for (i, tok) in t.iter().enumerate() {
        match tok.as_str() {
            "(" => {
                if d == depth {
                    start = i;
                }
                d += 1;
            }
            ")" => {
                d = d.saturating_sub(1);
                if d == depth {
                    out.push((start, i + 1));
                }
            }
            _ if d == depth => out.push((i, i + 1)),
            _ => {}
        }
    }
    out
}

fn is_atom(t: &str) -> bool {
    t != "(" && t != ")"
}

/// The mutations of either syntax, by `choice`: a token deleted (0), duplicated (1), swapped with
/// another of `atoms` (2) or replaced by one (8); a statement (`statements` finds them) deleted,
/// duplicated or moved to the end (3 to 5). `None` for any other choice, or without atoms to pick.
fn mutate_either(
    t: &mut Vec<String>,
    rng: &mut SmallRng,
    choice: u32,
    atoms: &[usize],
    statements: fn(&[String]) -> Vec<(usize, usize)>,
) -> Option<String> {
    let pick = |rng: &mut SmallRng, v: &[usize]| v[rng.gen_range(0..v.len())];
    Some(match choice {
        0 => {
            let i = rng.gen_range(0..t.len());
            format!("deleted token {i} `{}`", t.remove(i))
        }
        1 => {
            let i = rng.gen_range(0..t.len());
            t.insert(i, t[i].clone());
            format!("duplicated token {i} `{}`", t[i])
        }
        2 if !atoms.is_empty() => {
            let (i, j) = (pick(rng, atoms), pick(rng, atoms));
            t.swap(i, j);
            format!("swapped tokens {i} `{}` and {j} `{}`", t[j], t[i])
        }
        8 if !atoms.is_empty() => {
            let (i, j) = (pick(rng, atoms), pick(rng, atoms));
            let new = t[j].clone();
            let old = std::mem::replace(&mut t[i], new);
            format!("token {i} `{old}` became `{}`", t[i])
        }
        3..=5 => {
            let f = statements(t);
            if f.is_empty() {
                return Some("no statement".into());
            }
            let (a, b) = f[rng.gen_range(0..f.len())];
            let stmt: Vec<String> = t[a..b].to_vec();
            let text = stmt.join(" ");
            match rng.gen_range(0..3) {
                0 => {
                    t.drain(a..b);
                    format!("deleted statement `{text}`")
                }
                1 => {
                    let (c, _) = f[rng.gen_range(0..f.len())];
                    let at = if c > a { c.max(b) } else { c };
                    t.splice(at..at, stmt);
                    format!("duplicated statement `{text}` at token {at}")
                }
                _ => {
                    // Moved to the end: the order of statements must not matter.
                    t.drain(a..b);
                    t.extend(stmt);
                    format!("moved statement `{text}` to the end")
                }
            }
        }
        _ => return None,
    })
}

/// One random mutation of `t`, described.
pub(super) fn mutate(t: &mut Vec<String>, rng: &mut SmallRng) -> String {
    if t.is_empty() {
        t.push("(role r)".into());
        return "empty: added a role".into();
    }
    let atoms: Vec<usize> = (0..t.len()).filter(|&i| is_atom(&t[i])).collect();
    let pick = |rng: &mut SmallRng, v: &[usize]| v[rng.gen_range(0..v.len())];
    let choice = rng.gen_range(0..11);
    if let Some(done) = mutate_either(t, rng, choice, &atoms, |t| forms(t, 0)) {
        return done;
    }
    match choice {
        6..=7 => {
            // A literal of a rule deleted, or negated.
            let rules: Vec<(usize, usize)> = forms(t, 0)
                .into_iter()
                .filter(|&(a, b)| b - a > 3 && t[a + 1] == "<=")
                .collect();
            if rules.is_empty() {
                return "no rule".into();
            }
            let (a, b) = rules[rng.gen_range(0..rules.len())];
            let lits: Vec<(usize, usize)> = forms(&t[a..b], 1)
                .into_iter()
                .skip(2) // `<=` and the head
                .map(|(x, y)| (a + x, a + y))
                .collect();
            if lits.is_empty() {
                return "no literal".into();
            }
            let (x, y) = lits[rng.gen_range(0..lits.len())];
            let text = t[x..y].join(" ");
            if rng.gen_bool(0.5) {
                t.drain(x..y);
                format!("deleted literal `{text}`")
            } else {
                t.insert(y, ")".into());
                t.insert(x, "not".into());
                t.insert(x, "(".into());
                format!("negated literal `{text}`")
            }
        }
        9 if !atoms.is_empty() => {
            // A variable made fresh, a constant made a variable, or a variable made a constant.
            let i = pick(rng, &atoms);
            let new = if t[i].starts_with('?') {
                if rng.gen_bool(0.5) {
                    "?fresh".to_string()
                } else {
                    "zz".to_string()
                }
            } else {
                format!("?{}", t[i].to_lowercase())
            };
            let old = std::mem::replace(&mut t[i], new);
            format!("token {i} `{old}` became `{}`", t[i])
        }
        _ => change_number(t, &atoms, rng),
    }
}

/// A number changed (goal values, counters, arithmetic tables), in either syntax.
fn change_number(t: &mut [String], atoms: &[usize], rng: &mut SmallRng) -> String {
    let nums: Vec<usize> = atoms
        .iter()
        .copied()
        .filter(|&i| t[i].parse::<i64>().is_ok())
        .collect();
    if nums.is_empty() {
        return "no number".into();
    }
    let i = nums[rng.gen_range(0..nums.len())];
    let n: i64 = t[i].parse().unwrap();
    let new = match rng.gen_range(0..4) {
        0 => n + 1,
        1 => n - 1,
        2 => 100 - n,
        _ => n * 2 + 1,
    };
    let old = std::mem::replace(&mut t[i], new.to_string());
    format!("token {i} `{old}` became `{}`", t[i])
}

/// Prints tokens as KIF, one top-level statement a line.
pub(super) fn print(t: &[String]) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    for tok in t {
        match tok.as_str() {
            "(" => {
                if !out.is_empty() && !out.ends_with(['(', '\n']) {
                    out.push(' ');
                }
                out.push('(');
                depth += 1;
            }
            ")" => {
                out.push(')');
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    out.push('\n');
                }
            }
            a => {
                if !out.is_empty() && !out.ends_with(['(', '\n']) {
                    out.push(' ');
                }
                out.push_str(a);
                if depth == 0 {
                    out.push('\n');
                }
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------------
// Infix mutation

/// The characters of an infix name after its first (the lexer's `is_infix_ident_char`).
fn infix_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '/' | '+' | '-' | '*')
}

/// Infix tokens, cut as the logos lexer cuts them: names and variables (with a `.` that more of the name
/// follows, `a.b`), quoted strings with their quotes, `==>`, `:-`, `::` and one-character punctuation;
/// comments dropped. A character the lexer refuses stays a token of its own, so a mutant's text says
/// what it said.
pub(super) fn infix_tokens(src: &str) -> Vec<String> {
    let chars: Vec<char> = src.chars().collect();
    let at = |j: usize| chars.get(j).copied().unwrap_or(' ');
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == '%' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        let mut j = i + 1;
        if c == '"' {
            // An unterminated string ends at the line's end, as the lexer's does.
            while j < chars.len() && !matches!(chars[j], '"' | '\n') {
                j += 1;
            }
            if at(j) == '"' {
                j += 1;
            }
        } else if infix_name_char(c) {
            while infix_name_char(at(j)) || (at(j) == '.' && infix_name_char(at(j + 1))) {
                j += 1;
            }
        } else if (c, at(i + 1), at(i + 2)) == ('=', '=', '>') {
            j = i + 3;
        } else if c == ':' && matches!(at(i + 1), '-' | ':') {
            j = i + 2;
        }
        out.push(chars[i..j].iter().collect());
        i = j;
    }
    out
}

/// A name, variable or string (what a term or an atom's relation is made of).
fn is_infix_atom(t: &str) -> bool {
    t.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '"')
}

fn is_infix_var(t: &str) -> bool {
    t.starts_with(|c: char| c.is_ascii_uppercase() || c == '_')
}

/// Where each top-level statement starts. Infix statements need no separator (the grammar ends one where
/// its last literal ends), so a name outside parentheses starts one exactly when the token before it
/// ends a literal: a name, a variable, `)`, or the optional full stop.
fn infix_starts(t: &[String]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    for (i, tok) in t.iter().enumerate() {
        match tok.as_str() {
            "(" => depth += 1,
            ")" => depth = depth.saturating_sub(1),
            _ if depth == 0
                && is_infix_atom(tok)
                && !is_infix_var(tok)
                && (i == 0 || t[i - 1] == ")" || t[i - 1] == "." || is_infix_atom(&t[i - 1])) =>
            {
                out.push(i)
            }
            _ => {}
        }
    }
    out
}

/// The token ranges of the top-level statements.
pub(super) fn infix_statements(t: &[String]) -> Vec<(usize, usize)> {
    let starts = infix_starts(t);
    let ends = starts.iter().skip(1).copied().chain([t.len()]);
    starts.iter().copied().zip(ends).collect()
}

/// The literals of the statement at `a..b` (what follows `:-`, `::` or `==>`, split at `&` and `|`
/// outside parentheses): each literal's range, and the range deleting it removes, so that what is left
/// still reads as a statement: the literal with the `&` or `|` that joins it to a neighbour, or with the
/// `:-`, `::` or `==>` before it when it is alone there.
pub(super) fn infix_literals(
    t: &[String],
    a: usize,
    b: usize,
) -> Vec<((usize, usize), (usize, usize))> {
    let b = if b > a && t[b - 1] == "." { b - 1 } else { b };
    let mut depth = 0usize;
    let (mut ops, mut seps) = (Vec::new(), Vec::new());
    for (i, tok) in t.iter().enumerate().take(b).skip(a) {
        match tok.as_str() {
            "(" => depth += 1,
            ")" => depth = depth.saturating_sub(1),
            ":-" | "::" | "==>" if depth == 0 => ops.push(i),
            "&" | "|" if depth == 0 => seps.push(i),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for (k, &op) in ops.iter().enumerate() {
        let end = ops.get(k + 1).copied().unwrap_or(b);
        let cuts: Vec<usize> = seps
            .iter()
            .copied()
            .filter(|&s| s > op && s < end)
            .collect();
        let mut from = op + 1;
        for (j, &to) in cuts.iter().chain([&end]).enumerate() {
            let gone = match (j, cuts.first()) {
                (0, Some(&next)) => (from, next + 1),
                (0, None) => (op, end),
                _ => (cuts[j - 1], to),
            };
            if to > from {
                out.push(((from, to), gone));
            }
            from = to + 1;
        }
    }
    out
}

/// The operators of the infix grammar, for one to become another.
const INFIX_OPERATORS: &[&str] = &["&", "|", "~", ":-", "::", "==>", ",", "."];

/// One random mutation of infix tokens `t`, described: the KIF mutations' counterparts, and operators
/// changed (the grammar's precedence of `~`, `&`, `|`, `==>`, `:-` and `::` is what KIF's parentheses
/// spell out).
pub(super) fn mutate_infix(t: &mut Vec<String>, rng: &mut SmallRng) -> String {
    if t.is_empty() {
        t.extend(["role", "(", "r", ")"].map(String::from));
        return "empty: added a role".into();
    }
    let atoms: Vec<usize> = (0..t.len()).filter(|&i| is_infix_atom(&t[i])).collect();
    let pick = |rng: &mut SmallRng, v: &[usize]| v[rng.gen_range(0..v.len())];
    let choice = rng.gen_range(0..12);
    if let Some(done) = mutate_either(t, rng, choice, &atoms, infix_statements) {
        return done;
    }
    match choice {
        6..=7 => {
            // A literal of a rule or an operation (condition or effect) deleted, or negated.
            let lits: Vec<_> = infix_statements(t)
                .into_iter()
                .flat_map(|(a, b)| infix_literals(t, a, b))
                .collect();
            if lits.is_empty() {
                return "no literal".into();
            }
            let ((x, y), (ga, gb)) = lits[rng.gen_range(0..lits.len())];
            let text = t[x..y].join(" ");
            if rng.gen_bool(0.5) {
                let gone = t.drain(ga..gb).collect::<Vec<_>>().join(" ");
                format!("deleted literal `{text}` (`{gone}`)")
            } else {
                t.insert(x, "~".into());
                format!("negated literal `{text}`")
            }
        }
        9 if !atoms.is_empty() => {
            // A variable made fresh, anonymous or a constant; a constant made a variable.
            let i = pick(rng, &atoms);
            let new = if is_infix_var(&t[i]) {
                ["Fresh", "_", "zz"][rng.gen_range(0..3)].to_string()
            } else {
                let name: String = t[i].chars().filter(|&c| infix_name_char(c)).collect();
                match name.chars().next() {
                    Some(c) if c.is_ascii_lowercase() => {
                        c.to_ascii_uppercase().to_string() + &name[1..]
                    }
                    _ => format!("V{name}"),
                }
            };
            let old = std::mem::replace(&mut t[i], new);
            format!("token {i} `{old}` became `{}`", t[i])
        }
        10 => change_number(t, &atoms, rng),
        _ => {
            let ops: Vec<usize> = (0..t.len())
                .filter(|&i| INFIX_OPERATORS.contains(&t[i].as_str()))
                .collect();
            if ops.is_empty() {
                return "no operator".into();
            }
            let i = pick(rng, &ops);
            // Half the time `&` and `|` trade places, which keeps the statement parsing.
            let new = match t[i].as_str() {
                "&" if rng.gen_bool(0.5) => "|",
                "|" if rng.gen_bool(0.5) => "&",
                old => {
                    let others: Vec<&str> = INFIX_OPERATORS
                        .iter()
                        .copied()
                        .filter(|o| *o != old)
                        .collect();
                    others[rng.gen_range(0..others.len())]
                }
            };
            let old = std::mem::replace(&mut t[i], new.to_string());
            format!("operator {i} `{old}` became `{new}`")
        }
    }
}

/// Prints infix tokens, one statement a line, the tokens a space apart.
pub(super) fn print_infix(t: &[String]) -> String {
    let starts = infix_starts(t);
    let mut out = String::new();
    for (i, tok) in t.iter().enumerate() {
        if i > 0 {
            out.push(if starts.binary_search(&i).is_ok() {
                '\n'
            } else {
                ' '
            });
        }
        out.push_str(tok);
    }
    out.push('\n');
    out
}
