//! The words GDL gives a meaning to, as both syntaxes' readers and the later stages recognise them.

/// The words GDL gives a meaning to. KIF authors write them in any letter case (`ROLE`, `Legal`), so
/// they are looked up case-insensitively.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Keyword {
    /// `<=`, the rule arrow of KIF.
    Implies,
    /// `not`
    Not,
    /// `or`
    Or,
    /// `and`
    And,
    /// `distinct`
    Distinct,
    /// `role`
    Role,
    /// `init`
    Init,
    /// `true`
    True,
    /// `does`
    Does,
    /// `next`
    Next,
    /// `legal`
    Legal,
    /// `goal`
    Goal,
    /// `terminal`
    Terminal,
    /// `base`
    Base,
    /// `input`
    Input,
}

impl Keyword {
    const ALL: [(&'static str, Keyword); 15] = [
        ("<=", Keyword::Implies),
        ("not", Keyword::Not),
        ("or", Keyword::Or),
        ("and", Keyword::And),
        ("distinct", Keyword::Distinct),
        ("role", Keyword::Role),
        ("init", Keyword::Init),
        ("true", Keyword::True),
        ("does", Keyword::Does),
        ("next", Keyword::Next),
        ("legal", Keyword::Legal),
        ("goal", Keyword::Goal),
        ("terminal", Keyword::Terminal),
        ("base", Keyword::Base),
        ("input", Keyword::Input),
    ];

    /// The keyword `name` spells, in any letter case.
    pub fn of(name: &str) -> Option<Keyword> {
        Self::ALL
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|&(_, kw)| kw)
    }

    /// The keyword's name in lower case.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, kw)| *kw == self)
            .map_or("", |(k, _)| k)
    }
}
