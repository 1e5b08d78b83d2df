//! The one state type of both engines: a set of base propositions, one bit each ([`BitState`]).
//!
//! A game numbers its base propositions (the Datalog evaluator from its load-time analysis, the
//! network from its grounding, an open-mode rule game as play finds them) and a state is the set of
//! those numbers that hold. The numbering belongs to the game: **a state is read only by the game
//! that made it**, since the two engines may number the same game's propositions differently (the
//! network drops propositions its grounding proves constant).
//!
//! A closed game's states all have the same number of words. An open-mode state grows with the
//! highest proposition found so far and is built by [`BitState::from_ones`], which drops trailing zero
//! words: **equal sets of propositions are equal states** however late their numbers were found, so
//! that they compare and hash as one.

use smallvec::SmallVec;

/// A state: bit `i` is set when base proposition `i` holds (see the module documentation).
///
/// Up to [`INLINE_WORDS`] words are held in the value itself: a search or a playout over a game of at
/// most 256 base propositions (connect four, tic-tac-toe, breakthrough, every small test game) then
/// makes its states without touching the allocator; bigger states live on the heap as before.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct BitState(SmallVec<[u64; INLINE_WORDS]>);

/// How many words a [`BitState`] holds without an allocation.
pub const INLINE_WORDS: usize = 4;

impl Clone for BitState {
    fn clone(&self) -> BitState {
        BitState(self.0.clone())
    }
    /// Copies in place when the lengths match: the evaluators keep the state they last loaded this
    /// way, once per state switch.
    fn clone_from(&mut self, source: &BitState) {
        self.0.clone_from(&source.0);
    }
}

impl BitState {
    /// The empty state of `words` words.
    pub(crate) fn with_words(words: usize) -> BitState {
        BitState(SmallVec::from_elem(0, words))
    }

    /// The state of exactly these words.
    pub(crate) fn from_words(words: &[u64]) -> BitState {
        BitState(SmallVec::from_slice(words))
    }

    /// The state of the propositions `ones`, as few words long as its highest one needs (an
    /// open-mode state; see the module documentation).
    pub(crate) fn from_ones(ones: impl IntoIterator<Item = usize>) -> BitState {
        let mut words: SmallVec<[u64; INLINE_WORDS]> = SmallVec::new();
        for i in ones {
            if words.len() <= i / 64 {
                words.resize(i / 64 + 1, 0);
            }
            words[i / 64] |= 1 << (i % 64);
        }
        while words.last() == Some(&0) {
            words.pop();
        }
        BitState(words)
    }

    /// Whether proposition `i` holds; bits beyond the words are false.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> bool {
        self.0.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
    }

    /// Makes proposition `i` hold; it must lie within the words.
    #[inline]
    pub(crate) fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }

    /// The propositions that hold, in increasing order.
    pub(crate) fn ones(&self) -> impl Iterator<Item = usize> + '_ {
        ones(&self.0)
    }

    /// The words, bit `i` of the state being bit `i % 64` of word `i / 64`.
    #[inline]
    pub(crate) fn words(&self) -> &[u64] {
        &self.0
    }

    /// The words, to be written in place.
    #[inline]
    pub(crate) fn words_mut(&mut self) -> &mut [u64] {
        &mut self.0
    }

    /// The propositions of both `self` and `mask`, as long as the shorter of the two.
    pub(crate) fn and(&self, mask: &BitState) -> BitState {
        BitState(
            self.0
                .iter()
                .zip(mask.0.iter())
                .map(|(a, m)| a & m)
                .collect(),
        )
    }

    /// A well-mixed hash of the state, for transposition tables.
    pub fn key(&self) -> u64 {
        crate::game::bitset_key(&self.0)
    }
}

/// The set bits of `words` in increasing order, bit `i` being bit `i % 64` of word `i / 64`.
pub(crate) fn ones(words: &[u64]) -> impl Iterator<Item = usize> + '_ {
    words.iter().enumerate().flat_map(|(w, &bits)| {
        let mut b = bits;
        std::iter::from_fn(move || {
            if b == 0 {
                return None;
            }
            let i = b.trailing_zeros() as usize;
            b &= b - 1;
            Some(w * 64 + i)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::BitState;

    #[test]
    fn from_ones_trims_so_equal_sets_are_equal_states() {
        let a = BitState::from_ones([3, 70]);
        let mut b = BitState::with_words(3);
        b.set(3);
        b.set(70);
        assert_ne!(a, b, "a closed state keeps its length");
        assert_eq!(a, BitState::from_ones([70, 3, 3]));
        assert_eq!(a.words().len(), 2);
        assert_eq!(BitState::from_ones([]).words(), &[] as &[u64]);
    }

    #[test]
    fn bits_beyond_the_words_are_false() {
        let s = BitState::from_ones([1]);
        assert!(s.get(1) && !s.get(0) && !s.get(64) && !s.get(10_000));
    }

    #[test]
    fn ones_lists_every_set_bit_in_order() {
        let ones = [0, 5, 63, 64, 127, 128, 200];
        let s = BitState::from_ones(ones);
        assert_eq!(s.ones().collect::<Vec<_>>(), ones);
    }

    #[test]
    fn and_keeps_the_common_bits_and_clone_from_copies() {
        let s = BitState::from_ones([1, 2, 65]);
        let m = BitState::from_ones([2, 65, 66]);
        assert_eq!(s.and(&m).ones().collect::<Vec<_>>(), [2, 65]);
        let mut t = BitState::with_words(2);
        t.clone_from(&s);
        assert_eq!(t, s);
        assert_eq!(t.key(), s.key());
    }
}
