//! Evaluating a plan against one layer of postings (the base file or the overlay).
//!
//! Owns the order of work: the rarest trigram is decoded first and every other list only
//! filters what is left, so a query costs about the size of its rarest lists. Must not decide
//! soundness questions: a corrupt list is reported, and the caller widens to "all documents".

use super::plan::Plan;
use super::postings::{Corrupt, union};

/// A layer of posting lists.
pub(crate) trait PostingSource {
    /// How many documents hold `trigram` (0 when none do).
    fn doc_frequency(&self, trigram: u32) -> u32;
    /// The documents that hold `trigram`, sorted, into `out`.
    fn postings_into(&self, trigram: u32, out: &mut Vec<u32>) -> Result<(), Corrupt>;
    /// Keeps in `docs` (sorted) only the documents that hold `trigram`.
    fn retain_holding(&self, trigram: u32, docs: &mut Vec<u32>) -> Result<(), Corrupt>;
    /// Every document of the layer, sorted.
    fn all_docs(&self) -> Vec<u32>;
}

/// The sorted documents of `source` that satisfy `plan`.
pub(crate) fn evaluate(plan: &Plan, source: &impl PostingSource) -> Result<Vec<u32>, Corrupt> {
    match plan {
        Plan::All => Ok(source.all_docs()),
        Plan::Nothing => Ok(Vec::new()),
        Plan::Trigrams(trigrams) => {
            let mut by_frequency: Vec<(u32, u32)> = trigrams.iter().map(|&t| (source.doc_frequency(t), t)).collect();
            by_frequency.sort_unstable();
            let Some(&(rarest_frequency, rarest)) = by_frequency.first() else {
                return Ok(source.all_docs());
            };
            if rarest_frequency == 0 {
                return Ok(Vec::new());
            }
            let mut docs = Vec::new();
            source.postings_into(rarest, &mut docs)?;
            for &(_, trigram) in &by_frequency[1..] {
                if docs.is_empty() {
                    break;
                }
                source.retain_holding(trigram, &mut docs)?;
            }
            Ok(docs)
        }
        Plan::And(children) => {
            let mut ordered: Vec<&Plan> = children.iter().collect();
            // Trigram lists narrow cheapest; alternatives come after, restricted to what is left.
            ordered.sort_by_key(|child| !matches!(child, Plan::Trigrams(_)));
            let Some((first, rest)) = ordered.split_first() else {
                return Ok(source.all_docs());
            };
            let mut docs = evaluate(first, source)?;
            for child in rest {
                if docs.is_empty() {
                    break;
                }
                docs = restrict(child, docs, source)?;
            }
            Ok(docs)
        }
        Plan::Or(children) => {
            let mut docs = Vec::new();
            for child in children {
                docs = union(&docs, &evaluate(child, source)?);
            }
            Ok(docs)
        }
    }
}

/// The documents of `docs` (sorted) that satisfy `plan`.
fn restrict(plan: &Plan, mut docs: Vec<u32>, source: &impl PostingSource) -> Result<Vec<u32>, Corrupt> {
    match plan {
        Plan::All => Ok(docs),
        Plan::Nothing => Ok(Vec::new()),
        Plan::Trigrams(trigrams) => {
            let mut by_frequency: Vec<(u32, u32)> = trigrams.iter().map(|&t| (source.doc_frequency(t), t)).collect();
            by_frequency.sort_unstable();
            for &(_, trigram) in &by_frequency {
                if docs.is_empty() {
                    break;
                }
                source.retain_holding(trigram, &mut docs)?;
            }
            Ok(docs)
        }
        Plan::And(children) => {
            for child in children {
                if docs.is_empty() {
                    break;
                }
                docs = restrict(child, docs, source)?;
            }
            Ok(docs)
        }
        Plan::Or(children) => {
            let mut matched = Vec::new();
            for child in children {
                matched = union(&matched, &restrict(child, docs.clone(), source)?);
                if matched.len() == docs.len() {
                    break;
                }
            }
            Ok(matched)
        }
    }
}
