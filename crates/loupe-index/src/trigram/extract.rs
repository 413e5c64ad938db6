//! Trigram extraction: the sorted, deduplicated set of ASCII-lowercased byte trigrams of a text.
//!
//! Owns the one definition of "trigram" that documents and queries share (three bytes, ASCII
//! lowercased, packed big-end first into the low 24 bits of a `u32`). Must not allocate per
//! call beyond the caller's output vector, and must not hash: it runs over every byte of the
//! corpus.

use loupe_core::parallel::Spare;

/// The number of distinct trigrams: three bytes.
pub(crate) const TRIGRAM_SPACE: usize = 1 << 24;

/// Fills `out` with the sorted, deduplicated trigrams of `text`, each byte ASCII-lowercased
/// first. `out` is cleared first. Text shorter than three bytes has none.
///
/// Uses a three-level bitset of the whole trigram space (2 MiB), lent from `SPARE`, so the
/// output comes out sorted without a sort and the cost is one bit-set per byte plus one
/// bit-scan per distinct trigram.
pub fn trigrams_of(text: &[u8], out: &mut Vec<u32>) {
    out.clear();
    if text.len() < 3 {
        return;
    }
    // Tiny texts: sorting a handful of values beats touching the bitset levels.
    if text.len() <= SMALL_TEXT {
        out.extend(windows(text));
        out.sort_unstable();
        out.dedup();
        return;
    }
    // Only a bitset that `collect` left all-zero goes back (a panic drops it instead).
    SPARE.lend(TrigramBitset::new).collect(text, out);
}

/// The trigram of three bytes, ASCII-lowercased: `a` in bits 16..24, `c` in bits 0..8.
pub(crate) fn trigram(a: u8, b: u8, c: u8) -> u32 {
    (u32::from(a.to_ascii_lowercase()) << 16)
        | (u32::from(b.to_ascii_lowercase()) << 8)
        | u32::from(c.to_ascii_lowercase())
}

/// Every trigram of `text` in order of position, duplicates included (the reference
/// definition the fast path must agree with).
pub(crate) fn windows(text: &[u8]) -> impl Iterator<Item = u32> + '_ {
    text.windows(3).map(|w| trigram(w[0], w[1], w[2]))
}

/// Texts up to this length take the sort path.
const SMALL_TEXT: usize = 64;

/// Bitsets between extractions, at most one per core: lent to whichever thread extracts next.
/// Not one per thread: a server's threads come and go (tokio's blocking pool, scoped workers,
/// the watcher), and a table per thread that ever extracted grew the heap 2 MiB with each new
/// one (the soak's heap profile, 2026-11-26).
static SPARE: Spare<TrigramBitset> = Spare::new(|_| true);

/// A bitset over the trigram space with two summary levels, always left all-zero between
/// calls: `leaves` has one bit per trigram, `middle` one bit per non-zero leaf word, `top` one
/// bit per non-zero middle word.
struct TrigramBitset {
    leaves: Box<[u64; LEAF_WORDS]>,
    middle: Box<[u64; MIDDLE_WORDS]>,
    top: [u64; 64],
}

const LEAF_WORDS: usize = TRIGRAM_SPACE / 64;
const MIDDLE_WORDS: usize = LEAF_WORDS / 64;

impl TrigramBitset {
    fn new() -> Self {
        // Fixed-size arrays let the compiler see that masked indices are in range.
        let leaves = vec![0u64; LEAF_WORDS].into_boxed_slice().try_into().unwrap_or_else(|_| unreachable!());
        let middle = vec![0u64; MIDDLE_WORDS].into_boxed_slice().try_into().unwrap_or_else(|_| unreachable!());
        TrigramBitset { leaves, middle, top: [0; 64] }
    }

    fn collect(&mut self, text: &[u8], out: &mut Vec<u32>) {
        let (leaves, middle, top) = (&mut *self.leaves, &mut *self.middle, &mut self.top);
        let mut window: u32 = (u32::from(text[0].to_ascii_lowercase()) << 8) | u32::from(text[1].to_ascii_lowercase());
        for &byte in &text[2..] {
            window = ((window << 8) | u32::from(byte.to_ascii_lowercase())) & 0x00FF_FFFF;
            let leaf = (window >> 6) as usize;
            // The masks keep every index provably in range, so no bounds check panics here.
            leaves[leaf & (LEAF_WORDS - 1)] |= 1 << (window & 63);
            middle[(leaf >> 6) & (MIDDLE_WORDS - 1)] |= 1 << (leaf & 63);
            top[(leaf >> 12) & 63] |= 1 << ((leaf >> 6) & 63);
        }
        for (top_index, top_slot) in top.iter_mut().enumerate() {
            let mut top_word = std::mem::take(top_slot);
            while top_word != 0 {
                let middle_index = top_index * 64 + top_word.trailing_zeros() as usize;
                top_word &= top_word - 1;
                let mut middle_word = std::mem::take(&mut middle[middle_index]);
                while middle_word != 0 {
                    let leaf_index = middle_index * 64 + middle_word.trailing_zeros() as usize;
                    middle_word &= middle_word - 1;
                    let mut leaf_word = std::mem::take(&mut leaves[leaf_index]);
                    let base = (leaf_index as u32) << 6;
                    while leaf_word != 0 {
                        out.push(base | leaf_word.trailing_zeros());
                        leaf_word &= leaf_word - 1;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(text: &[u8]) -> Vec<u32> {
        let mut all: Vec<u32> = windows(text).collect();
        all.sort_unstable();
        all.dedup();
        all
    }

    #[test]
    fn short_texts_have_no_trigrams() {
        let mut out = vec![7];
        trigrams_of(b"", &mut out);
        assert!(out.is_empty());
        trigrams_of(b"ab", &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn trigrams_are_lowercased_sorted_and_deduplicated() {
        let mut out = Vec::new();
        trigrams_of(b"AbCabc", &mut out);
        assert_eq!(out, vec![trigram(b'a', b'b', b'c'), trigram(b'b', b'c', b'a'), trigram(b'c', b'a', b'b')]);
        assert_eq!(trigram(b'A', b'B', b'C'), 0x61_62_63);
    }

    #[test]
    fn non_ascii_bytes_are_kept_raw() {
        let mut out = Vec::new();
        trigrams_of("É".repeat(2).as_bytes(), &mut out);
        assert_eq!(out, vec![0x89_C3_89, 0xC3_89_C3]);
    }

    #[test]
    fn bitset_path_agrees_with_sorting_and_leaves_the_table_clean() {
        let mut out = Vec::new();
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        for round in 0..40 {
            let len = 65 + round * 97;
            let text: Vec<u8> = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    // A small alphabet for repeats, plus the odd arbitrary byte.
                    if seed.is_multiple_of(11) { (seed >> 8) as u8 } else { b"abcXYZ_\n"[(seed >> 16) as usize % 8] }
                })
                .collect();
            trigrams_of(&text, &mut out);
            assert_eq!(out, reference(&text), "round {round}");
        }
        // Two calls in a row must not leak bits from the first into the second.
        trigrams_of(&[b'q'; 200], &mut out);
        assert_eq!(out, vec![trigram(b'q', b'q', b'q')]);
    }
}
