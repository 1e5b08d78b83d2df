//! Relations as flat rows with hash indexes: what the evaluator stores and the join reads.
//!
//! The entry point is [`RelStore`], the facts of one relation: a flat vector of rows (`arity` term
//! ids each), a hash table of rows for deduplication, and one hash index per key its readers need
//! (whole columns, or parts of a column's term: see [`Slot`]). An index maps a key to the most
//! recent row with that key, and each row links to the previous one with the same key, so a lookup
//! walks the rows with a key newest first and inserting allocates nothing once the vectors have
//! grown. A row whose term lacks a keyed part (a constant where the key wants an argument) is left
//! out of that index: no lookup through it could match the row.
//!
//! **Invariants:** rows are only appended (until the relation is cleared), so a row number never
//! changes and "the rows added since" is a range of row numbers, which is what the semi-naive
//! evaluator's deltas are. Hash tables file a row number with half of its hash
//! ([`Filed`]), so growing a table reads no row. Clearing keeps every capacity, so evaluating a
//! state allocates nothing in the steady state.

use hashbrown::HashTable;
use smallvec::SmallVec;

use super::compiled::Slot;
use super::terms::{hash_ids, Filed, TermId, TermStore};

/// The end of an index's chain of rows: no (further) row has the key.
pub(super) const NONE: u32 = u32::MAX;

/// One index of a relation: for each key, the newest row with it, and each row's previous one.
#[derive(Clone, Debug)]
pub(super) struct Index {
    slots: Box<[Slot]>,
    /// Every slot is a whole column (no term to look into).
    whole: bool,
    heads: HashTable<Filed>,
    /// For each row, the previous row with the same key ([`NONE`] for the first, and for a row
    /// whose terms lack a keyed part). Its length is the number of rows indexed so far.
    pub(super) next: Vec<u32>,
}

impl Index {
    /// Adds row `r` of `rows` (rows of `a` columns), the rows before it being in the index already.
    #[inline]
    pub(super) fn add(&mut self, rows: &[TermId], a: usize, r: u32, terms: &TermStore) {
        let Index {
            slots,
            whole,
            heads,
            next,
        } = self;
        let (slots, whole) = (&**slots, *whole);
        let row_of = |r: u32| &rows[r as usize * a..(r as usize + 1) * a];
        let Some(key) = Index::key(slots, whole, terms, row_of(r)) else {
            next.push(NONE);
            return;
        };
        let half = Filed::half(hash_ids(key.iter().copied()));
        let same_key = |f: &Filed| {
            f.hash == half && Index::row_has_key(slots, whole, terms, row_of(f.row), &key)
        };
        match heads.find_mut(Filed::spread(half), same_key) {
            Some(head) => {
                next.push(head.row);
                head.row = r;
            }
            None => {
                next.push(NONE);
                let f = Filed { row: r, hash: half };
                heads.insert_unique(Filed::spread(half), f, |f| Filed::spread(f.hash));
            }
        }
    }

    /// `row`'s key, or `None` when its terms lack a keyed part.
    #[inline]
    fn key(
        slots: &[Slot],
        whole: bool,
        terms: &TermStore,
        row: &[TermId],
    ) -> Option<SmallVec<[TermId; 8]>> {
        if whole {
            Some(slots.iter().map(|s| row[s.col]).collect())
        } else {
            slots.iter().map(|s| s.value(terms, row)).collect()
        }
    }

    /// Whether `row`'s key equals `key` (a row without every keyed part never does).
    #[inline]
    fn row_has_key(
        slots: &[Slot],
        whole: bool,
        terms: &TermStore,
        row: &[TermId],
        key: &[TermId],
    ) -> bool {
        if whole {
            slots.iter().zip(key).all(|(s, k)| row[s.col] == *k)
        } else {
            slots
                .iter()
                .zip(key)
                .all(|(s, k)| s.value(terms, row) == Some(*k))
        }
    }
}

/// The facts of one relation.
#[derive(Clone, Debug)]
pub struct RelStore {
    pub(super) arity: usize,
    /// The rows, one after the other.
    pub(super) rows: Vec<TermId>,
    /// The number of rows.
    pub(super) len: u32,
    dedup: HashTable<Filed>,
    /// The indexes, in the order of the plan's key slots for the relation.
    pub(super) indexes: Vec<Index>,
}

impl RelStore {
    /// The same rows (same row numbers) with no index: a copy nothing evaluates, only looks up.
    pub(crate) fn copy_rows(&self) -> RelStore {
        RelStore {
            arity: self.arity,
            rows: self.rows.clone(),
            len: self.len,
            dedup: self.dedup.clone(),
            indexes: Vec::new(),
        }
    }

    pub(super) fn new(arity: usize, index_slots: &[Vec<Slot>]) -> RelStore {
        RelStore {
            arity,
            rows: Vec::new(),
            len: 0,
            dedup: HashTable::new(),
            indexes: index_slots
                .iter()
                .map(|c| Index {
                    whole: c.iter().all(|s| s.path.is_empty()),
                    slots: c.clone().into_boxed_slice(),
                    heads: HashTable::new(),
                    next: Vec::new(),
                })
                .collect(),
        }
    }

    /// The number of facts.
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether there is no fact.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Fact number `i`.
    #[inline]
    pub fn row(&self, i: usize) -> &[TermId] {
        &self.rows[i * self.arity..(i + 1) * self.arity]
    }

    /// Whether the fact is present.
    pub fn contains(&self, fact: &[TermId]) -> bool {
        self.position(fact).is_some()
    }

    /// Whether every row is in the deduplication table, so that [`RelStore::contains`] hashes
    /// instead of scanning.
    pub fn is_hashed(&self) -> bool {
        self.dedup.len() == self.len as usize
    }

    /// The fact's row number, if it is present.
    pub fn position(&self, fact: &[TermId]) -> Option<usize> {
        if self.dedup.len() != self.len as usize {
            return (0..self.len()).position(|i| self.row(i) == fact);
        }
        self.find_hashed(fact, hash_ids(fact.iter().copied()))
            .map(|r| r as usize)
    }

    #[inline]
    pub(super) fn clear(&mut self) {
        self.rows.clear();
        self.len = 0;
        self.dedup.clear();
        for ix in &mut self.indexes {
            ix.heads.clear();
            ix.next.clear();
        }
    }

    /// Adds a fact; false when it was already there.
    #[inline]
    pub(super) fn insert(&mut self, fact: &[TermId], terms: &TermStore) -> bool {
        self.insert_row(fact, true, terms)
    }

    /// Adds a fact, first checking that it is new when `check` (else the caller knows it is, and the
    /// deduplication table is left out: [`RelStore::contains`] then scans).
    #[inline]
    pub(super) fn insert_row(&mut self, fact: &[TermId], check: bool, terms: &TermStore) -> bool {
        if !check {
            self.push_row(fact, None, terms);
            return true;
        }
        let h = hash_ids(fact.iter().copied());
        if self.find_hashed(fact, h).is_some() {
            return false;
        }
        self.push_row(fact, Some(h), terms);
        true
    }

    /// The row of a fact whose hash is `h`, if present.
    #[inline]
    pub(super) fn find_hashed(&self, fact: &[TermId], h: u64) -> Option<u32> {
        let half = Filed::half(h);
        self.dedup
            .find(Filed::spread(half), |f| {
                f.hash == half && self.row(f.row as usize) == fact
            })
            .map(|f| f.row)
    }

    /// The fact's row number, the fact added first when new (one hash either way).
    pub(crate) fn find_or_insert(&mut self, fact: &[TermId], terms: &TermStore) -> usize {
        let h = hash_ids(fact.iter().copied());
        match self.find_hashed(fact, h) {
            Some(r) => r as usize,
            None => self.push_row(fact, Some(h), terms) as usize,
        }
    }

    /// Appends a fact (known to be new), in the deduplication table when its hash `h` is given, and
    /// in every index; returns its row.
    #[inline]
    pub(super) fn push_row(&mut self, fact: &[TermId], h: Option<u64>, terms: &TermStore) -> u32 {
        let r = self.push_unindexed(fact, h);
        for ix in &mut self.indexes {
            ix.add(&self.rows, self.arity, r, terms);
        }
        r
    }

    /// Appends a fact (known to be new), in the deduplication table when its hash `h` is given but in
    /// no index yet; returns its row.
    #[inline]
    pub(super) fn push_unindexed(&mut self, fact: &[TermId], h: Option<u64>) -> u32 {
        let r = self.len;
        self.rows.extend_from_slice(fact);
        self.len += 1;
        if let Some(h) = h {
            let f = Filed {
                row: r,
                hash: Filed::half(h),
            };
            self.dedup
                .insert_unique(Filed::spread(f.hash), f, |f| Filed::spread(f.hash));
        }
        r
    }

    /// The most recent row whose key in index `index` equals `key`, or `NONE`.
    #[inline]
    pub(super) fn lookup(&self, index: usize, key: &[TermId], terms: &TermStore) -> u32 {
        let ix = &self.indexes[index];
        let half = Filed::half(hash_ids(key.iter().copied()));
        ix.heads
            .find(Filed::spread(half), |f| {
                f.hash == half
                    && Index::row_has_key(&ix.slots, ix.whole, terms, self.row(f.row as usize), key)
            })
            .map_or(NONE, |f| f.row)
    }
}
