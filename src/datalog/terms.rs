//! The term store: every ground term of an evaluation, hash-consed into a dense [`TermId`].
//!
//! A term is a constant or a function symbol applied to argument ids, so terms nest to any depth while
//! comparing two terms is comparing two `u32`s. Constants are found through a flat array indexed by the
//! symbol (no hashing); function terms through one hash table keyed by symbol and argument ids.

use std::hash::{BuildHasher, Hasher};

use hashbrown::HashTable;

use crate::syntax::ast::{Sym, Symbols};

/// A ground term, interned in a [`TermStore`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TermId(pub u32);

/// A fast, non-cryptographic hasher for small id tuples (the FxHash mixing step).
#[derive(Clone, Copy, Default)]
pub struct FxHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    /// Mixes one word into the hash.
    #[inline]
    pub fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.add(u64::from(*b));
        }
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
}

/// Builds [`FxHasher`]s, for hashbrown maps keyed by ids.
#[derive(Clone, Copy, Default)]
pub struct FxBuild;

impl BuildHasher for FxBuild {
    type Hasher = FxHasher;
    fn build_hasher(&self) -> FxHasher {
        FxHasher::default()
    }
}

/// Hashes a slice of term ids.
#[inline]
pub fn hash_ids(ids: impl Iterator<Item = TermId>) -> u64 {
    let mut h = FxHasher::default();
    for t in ids {
        h.add(u64::from(t.0));
    }
    h.finish()
}

/// A row (or any numbered item) filed in a hash table, with the high half of the hash it is filed
/// under: growing the table reads no row, and a probe compares a row only when the halves agree.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Filed {
    /// The row.
    pub row: u32,
    /// The high half of its hash.
    pub hash: u32,
}

impl Filed {
    /// The half of `h` a table files by.
    #[inline]
    pub(crate) fn half(h: u64) -> u32 {
        (h >> 32) as u32
    }

    /// The hash the table sees for a half: spread so that the bucket (low bits) and the tag (high
    /// bits) both depend on it.
    #[inline]
    pub(crate) fn spread(half: u32) -> u64 {
        u64::from(half).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }
}

#[derive(Clone, Copy, Debug)]
struct Node {
    sym: Sym,
    /// Start of the arguments in `TermStore::args`; `u32::MAX` for a constant.
    start: u32,
    len: u32,
    depth: u32,
}

/// The interned terms of one program (see the module documentation).
#[derive(Clone, Debug)]
pub struct TermStore {
    symbols: Symbols,
    nodes: Vec<Node>,
    args: Vec<TermId>,
    consts: Vec<u32>,
    funcs: HashTable<u32>,
    ints: Vec<Option<i64>>,
}

const NONE: u32 = u32::MAX;

impl TermStore {
    /// A store over the names of `symbols` (which it keeps, to print terms and to add numbers).
    pub fn new(symbols: Symbols) -> TermStore {
        TermStore {
            symbols,
            nodes: Vec::new(),
            args: Vec::new(),
            consts: Vec::new(),
            funcs: HashTable::new(),
            ints: Vec::new(),
        }
    }

    /// The symbol table.
    pub fn symbols(&self) -> &Symbols {
        &self.symbols
    }

    /// Interns a name.
    pub fn intern_sym(&mut self, name: &str) -> Sym {
        self.symbols.intern(name)
    }

    /// The number of terms.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The constant `sym`, created when new.
    pub fn constant(&mut self, sym: Sym) -> TermId {
        if let Some(id) = self.find_constant(sym) {
            return id;
        }
        let i = sym.0 as usize;
        if self.consts.len() <= i {
            self.consts.resize(i + 1, NONE);
        }
        let id = TermId(self.nodes.len() as u32);
        self.nodes.push(Node {
            sym,
            start: NONE,
            len: 0,
            depth: 0,
        });
        self.ints.push(self.symbols.name(sym).parse::<i64>().ok());
        self.consts[i] = id.0;
        id
    }

    /// The constant `sym` if it exists.
    #[inline]
    pub fn find_constant(&self, sym: Sym) -> Option<TermId> {
        match self.consts.get(sym.0 as usize) {
            Some(&id) if id != NONE => Some(TermId(id)),
            _ => None,
        }
    }

    /// The constant for the integer `n`, if the store has it.
    pub fn find_int(&self, n: i64) -> Option<TermId> {
        self.symbols
            .get(&n.to_string())
            .and_then(|s| self.find_constant(s))
    }

    /// The constant for the integer `n`.
    pub fn int(&mut self, n: i64) -> TermId {
        let sym = self.symbols.intern(&n.to_string());
        self.constant(sym)
    }

    fn func_hash(sym: Sym, args: &[TermId]) -> u64 {
        let mut h = FxHasher::default();
        h.add(u64::from(sym.0));
        for a in args {
            h.add(u64::from(a.0));
        }
        h.finish()
    }

    /// The function term `sym(args)` if it exists (a 0-ary function is the constant).
    #[inline]
    pub fn find_func(&self, sym: Sym, args: &[TermId]) -> Option<TermId> {
        if args.is_empty() {
            return self.find_constant(sym);
        }
        let h = Self::func_hash(sym, args);
        self.funcs
            .find(h, |&id| {
                let n = &self.nodes[id as usize];
                n.sym == sym && self.args_of(n) == args
            })
            .map(|&id| TermId(id))
    }

    fn args_of(&self, n: &Node) -> &[TermId] {
        if n.start == NONE {
            &[]
        } else {
            &self.args[n.start as usize..(n.start + n.len) as usize]
        }
    }

    /// The function term `sym(args)`, created when new (a 0-ary function is the constant).
    pub fn func(&mut self, sym: Sym, args: &[TermId]) -> TermId {
        if args.is_empty() {
            return self.constant(sym);
        }
        if let Some(id) = self.find_func(sym, args) {
            return id;
        }
        let depth = 1 + args.iter().map(|a| self.depth(*a)).max().unwrap_or(0);
        let id = TermId(self.nodes.len() as u32);
        let start = self.args.len() as u32;
        self.args.extend_from_slice(args);
        self.nodes.push(Node {
            sym,
            start,
            len: args.len() as u32,
            depth,
        });
        self.ints.push(None);
        let h = Self::func_hash(sym, args);
        let nodes = &self.nodes;
        let all = &self.args;
        self.funcs.insert_unique(h, id.0, |&other| {
            let n = &nodes[other as usize];
            let a = &all[n.start as usize..(n.start + n.len) as usize];
            Self::func_hash(n.sym, a)
        });
        id
    }

    /// The copy in this store of `t`, a term of `src` (another store whose symbols may be numbered
    /// differently: symbols are matched by name), created when new. Recursive, as deep as `t`, which
    /// the evaluator keeps within [`super::Limits::max_depth`].
    pub fn import(&mut self, src: &TermStore, t: TermId) -> TermId {
        let sym = self.symbols.intern(src.name(src.sym(t)));
        if src.is_const(t) {
            return self.constant(sym);
        }
        let args: Vec<TermId> = src.args(t).iter().map(|&a| self.import(src, a)).collect();
        self.func(sym, &args)
    }

    /// The symbol of a term (the constant itself, or the function symbol).
    #[inline]
    pub fn sym(&self, t: TermId) -> Sym {
        self.nodes[t.0 as usize].sym
    }

    /// The arguments of a term (empty for a constant).
    #[inline]
    pub fn args(&self, t: TermId) -> &[TermId] {
        self.args_of(&self.nodes[t.0 as usize])
    }

    /// Whether the term is a constant.
    #[inline]
    pub fn is_const(&self, t: TermId) -> bool {
        self.nodes[t.0 as usize].start == NONE
    }

    /// The nesting depth: 0 for a constant.
    #[inline]
    pub fn depth(&self, t: TermId) -> u32 {
        self.nodes[t.0 as usize].depth
    }

    /// The integer value of a constant that is written as an integer.
    #[inline]
    pub fn as_int(&self, t: TermId) -> Option<i64> {
        self.ints[t.0 as usize]
    }

    /// The name of a symbol.
    pub fn name(&self, sym: Sym) -> &str {
        self.symbols.name(sym)
    }

    /// Writes a term in KIF: `(cell 1 1 b)`.
    pub fn write_kif(&self, t: TermId, out: &mut String) {
        let n = self.nodes[t.0 as usize];
        if n.start == NONE {
            out.push_str(self.name(n.sym));
            return;
        }
        out.push('(');
        out.push_str(self.name(n.sym));
        for &a in self.args_of(&n) {
            out.push(' ');
            self.write_kif(a, out);
        }
        out.push(')');
    }

    /// Writes a term in infix: `cell(1,1,b)`.
    pub fn write_infix(&self, t: TermId, out: &mut String) {
        let n = self.nodes[t.0 as usize];
        out.push_str(self.name(n.sym));
        if n.start == NONE {
            return;
        }
        out.push('(');
        for (i, &a) in self.args_of(&n).iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            self.write_infix(a, out);
        }
        out.push(')');
    }

    /// A term in KIF.
    pub fn kif(&self, t: TermId) -> String {
        let mut s = String::new();
        self.write_kif(t, &mut s);
        s
    }

    /// The start of a term in KIF, at most about `max` bytes, with ` ...` where it was cut: a term
    /// that shares its subterms may print to far more text than it takes memory (`(g X X)` nested
    /// 200 deep is 2^200 characters).
    pub fn kif_head(&self, t: TermId, max: usize) -> String {
        let mut s = String::new();
        if !self.write_kif_within(t, &mut s, max) || s.len() > max {
            let mut end = max.min(s.len());
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            s.truncate(end);
            s.push_str(" ...");
        }
        s
    }

    /// Writes `t` in KIF while `out` holds at most `max` bytes; false when it stopped short.
    fn write_kif_within(&self, t: TermId, out: &mut String, max: usize) -> bool {
        if out.len() > max {
            return false;
        }
        let n = self.nodes[t.0 as usize];
        if n.start == NONE {
            out.push_str(self.name(n.sym));
            return true;
        }
        out.push('(');
        out.push_str(self.name(n.sym));
        for &a in self.args_of(&n) {
            out.push(' ');
            if !self.write_kif_within(a, out, max) {
                return false;
            }
        }
        out.push(')');
        true
    }

    /// A term in infix.
    pub fn infix(&self, t: TermId) -> String {
        let mut s = String::new();
        self.write_infix(t, &mut s);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_are_hash_consed_and_print_in_both_syntaxes() {
        let mut st = TermStore::new(Symbols::new());
        let cell = st.intern_sym("cell");
        let one = st.intern_sym("1");
        let b = st.intern_sym("b");
        let c1 = st.constant(one);
        let cb = st.constant(b);
        let t = st.func(cell, &[c1, c1, cb]);
        assert_eq!(st.func(cell, &[c1, c1, cb]), t);
        assert_eq!(st.kif(t), "(cell 1 1 b)");
        assert_eq!(st.kif_head(t, 12), "(cell 1 1 b)");
        assert_eq!(st.kif_head(t, 7), "(cell 1 ...");
        assert_eq!(st.infix(t), "cell(1,1,b)");
        assert_eq!(st.as_int(c1), Some(1));
        assert_eq!(st.depth(t), 1);
        assert_eq!(st.func(cell, &[]), st.constant(cell), "(p) is p");
        let nested = st.func(cell, &[t]);
        assert_eq!(st.depth(nested), 2);
        assert_eq!(st.find_func(cell, &[t, t]), None);
    }

    #[test]
    fn import_copies_a_term_across_stores_numbered_differently() {
        let mut a = TermStore::new(Symbols::new());
        let (s, n, zero) = (a.intern_sym("s"), a.intern_sym("n"), a.intern_sym("0"));
        let z = a.constant(zero);
        let t = a.func(s, &[z]);
        let t = a.func(n, &[t]);
        let mut b = TermStore::new(Symbols::new());
        let other = b.intern_sym("other");
        b.constant(other);
        let u = b.import(&a, t);
        assert_eq!(b.kif(u), "(n (s 0))");
        assert_eq!(b.depth(u), 2);
        assert_eq!(b.import(&a, t), u, "hash-consed");
        assert_eq!(a.import(&b, u), t, "and back to the same id");
        let zb = b.import(&a, z);
        assert_eq!(b.as_int(zb), Some(0));
    }
}
