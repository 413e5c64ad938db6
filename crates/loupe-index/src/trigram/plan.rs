//! Query plans: which trigrams a document must contain for a query to possibly match in it.
//!
//! Owns the `Plan` type, its simplification, the size cap that keeps a plan cheap to evaluate,
//! and the plan of a literal. A plan only ever narrows soundly: every document that can match
//! the query satisfies the plan (the converse is the caller's verification). Must not weaken
//! that: when in doubt, a sub-plan becomes `All`, never `Nothing`.

use super::extract::trigrams_of;

/// What a document must contain for the query to possibly match in it.
///
/// Plans are monotone (no negation), so replacing any part by `All` keeps a plan sound; the
/// constructors [`Plan::and`] and [`Plan::or`] simplify as they build.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Plan {
    /// No constraint: every document is a candidate.
    All,
    /// No document can match.
    Nothing,
    /// Every one of these trigrams (sorted, distinct, non-empty after simplification).
    Trigrams(Vec<u32>),
    /// Every sub-plan.
    And(Vec<Plan>),
    /// At least one sub-plan.
    Or(Vec<Plan>),
}

impl Plan {
    /// Whether one document, whose trigrams `has` reports (it may say yes for one it lacks,
    /// never no for one it holds), can satisfy the plan.
    pub fn may_match(&self, has: &dyn Fn(u32) -> bool) -> bool {
        match self {
            Plan::All => true,
            Plan::Nothing => false,
            Plan::Trigrams(trigrams) => trigrams.iter().all(|&trigram| has(trigram)),
            Plan::And(children) => children.iter().all(|child| child.may_match(has)),
            Plan::Or(children) => children.iter().any(|child| child.may_match(has)),
        }
    }
}

/// The most trigram leaves a plan keeps; past it, parts of the plan degrade to `All`.
pub(crate) const MAX_PLAN_TRIGRAMS: usize = 256;
/// The most alternatives an `Or` keeps; past it, only what they all require stays.
pub(crate) const MAX_ALTERNATIVES: usize = 128;

impl Plan {
    /// The plan requiring the trigrams of `bytes` (all of them; `All` under three bytes).
    pub fn of_bytes(bytes: &[u8]) -> Plan {
        let mut trigrams = Vec::new();
        trigrams_of(bytes, &mut trigrams);
        Plan::trigrams(trigrams)
    }

    /// The plan requiring every trigram in `trigrams` (any order, duplicates allowed).
    pub fn trigrams(mut trigrams: Vec<u32>) -> Plan {
        trigrams.sort_unstable();
        trigrams.dedup();
        if trigrams.is_empty() { Plan::All } else { Plan::Trigrams(trigrams) }
    }

    /// The conjunction of `plans`, simplified: nested `And`s flattened, `All` dropped, any
    /// `Nothing` wins, trigram lists merged, duplicates removed.
    pub fn and(plans: Vec<Plan>) -> Plan {
        let mut trigrams: Vec<u32> = Vec::new();
        let mut others: Vec<Plan> = Vec::new();
        let mut pending = plans;
        while let Some(plan) = pending.pop() {
            match plan {
                Plan::All => {}
                Plan::Nothing => return Plan::Nothing,
                Plan::Trigrams(list) => trigrams.extend(list),
                Plan::And(children) => pending.extend(children),
                or @ Plan::Or(_) => others.push(or),
            }
        }
        trigrams.sort_unstable();
        trigrams.dedup();
        // An alternative already implied by the required trigrams adds nothing: Or(a, b) where
        // a's trigrams are all required is always true given them.
        others.retain(|or| match or {
            Plan::Or(alternatives) => !alternatives.iter().any(|alternative| match alternative {
                Plan::Trigrams(list) => list.iter().all(|t| trigrams.binary_search(t).is_ok()),
                _ => false,
            }),
            _ => true,
        });
        others.sort();
        others.dedup();
        if !trigrams.is_empty() {
            others.insert(0, Plan::Trigrams(trigrams));
        }
        match others.len() {
            0 => Plan::All,
            1 => others.pop().unwrap_or(Plan::All),
            _ => Plan::And(others),
        }
    }

    /// The disjunction of `plans`, simplified: nested `Or`s flattened, `Nothing` dropped, any
    /// `All` wins, duplicates removed, and a trigram list dropped when a subset of it is an
    /// alternative too (the subset is implied by it).
    pub fn or(plans: Vec<Plan>) -> Plan {
        let mut alternatives: Vec<Plan> = Vec::new();
        let mut pending = plans;
        while let Some(plan) = pending.pop() {
            match plan {
                Plan::All => return Plan::All,
                Plan::Nothing => {}
                Plan::Or(children) => pending.extend(children),
                other => alternatives.push(other),
            }
        }
        alternatives.sort();
        alternatives.dedup();
        // Too many alternatives cost more to evaluate than they save: keep only what every
        // alternative requires.
        if alternatives.len() > MAX_ALTERNATIVES {
            return Plan::trigrams(common_required(&alternatives));
        }
        let lists: Vec<Vec<u32>> = alternatives
            .iter()
            .filter_map(|plan| if let Plan::Trigrams(list) = plan { Some(list.clone()) } else { None })
            .collect();
        alternatives.retain(|plan| {
            let Plan::Trigrams(list) = plan else { return true };
            !lists.iter().any(|other| other.len() < list.len() && other.iter().all(|t| list.binary_search(t).is_ok()))
        });
        // Or(C ∧ a, C ∧ b) = C ∧ Or(a, b): evaluate the common part once.
        if alternatives.len() > 1 && alternatives.iter().all(|plan| matches!(plan, Plan::Trigrams(_))) {
            let common = common_required(&alternatives);
            if !common.is_empty() {
                let rests = alternatives
                    .iter()
                    .map(|plan| match plan {
                        Plan::Trigrams(list) => {
                            Plan::trigrams(list.iter().copied().filter(|t| common.binary_search(t).is_err()).collect())
                        }
                        other => other.clone(),
                    })
                    .collect();
                return Plan::and(vec![Plan::Trigrams(common), Plan::or(rests)]);
            }
        }
        match alternatives.len() {
            0 => Plan::Nothing,
            1 => alternatives.pop().unwrap_or(Plan::Nothing),
            _ => Plan::Or(alternatives),
        }
    }

    /// The trigrams the plan requires outright (its top-level trigram list), sorted.
    fn required(&self) -> &[u32] {
        match self {
            Plan::Trigrams(list) => list,
            Plan::And(children) => children
                .iter()
                .find_map(|child| if let Plan::Trigrams(list) = child { Some(list.as_slice()) } else { None })
                .unwrap_or(&[]),
            Plan::All | Plan::Nothing | Plan::Or(_) => &[],
        }
    }

    /// The number of trigram leaves, counting each occurrence.
    pub fn trigram_count(&self) -> usize {
        match self {
            Plan::All | Plan::Nothing => 0,
            Plan::Trigrams(list) => list.len(),
            Plan::And(children) | Plan::Or(children) => children.iter().map(Plan::trigram_count).sum(),
        }
    }

    /// Every trigram the plan mentions, sorted and distinct.
    pub fn mentioned_trigrams(&self) -> Vec<u32> {
        fn walk(plan: &Plan, out: &mut Vec<u32>) {
            match plan {
                Plan::All | Plan::Nothing => {}
                Plan::Trigrams(list) => out.extend_from_slice(list),
                Plan::And(children) | Plan::Or(children) => children.iter().for_each(|child| walk(child, out)),
            }
        }
        let mut out = Vec::new();
        walk(self, &mut out);
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Whether a document with the sorted trigram set `doc_trigrams` satisfies the plan.
    pub fn matches(&self, doc_trigrams: &[u32]) -> bool {
        match self {
            Plan::All => true,
            Plan::Nothing => false,
            Plan::Trigrams(list) => list.iter().all(|t| doc_trigrams.binary_search(t).is_ok()),
            Plan::And(children) => children.iter().all(|child| child.matches(doc_trigrams)),
            Plan::Or(children) => children.iter().any(|child| child.matches(doc_trigrams)),
        }
    }

    /// Caps the plan at `budget` trigram leaves by weakening it: an `And` keeps the children
    /// that fit, an `Or` that does not fit becomes `All`, a long trigram list keeps a prefix.
    /// Weakening a monotone plan only adds candidates, so the result stays sound.
    pub(crate) fn capped(self, budget: usize) -> Plan {
        fn cap(plan: Plan, budget: &mut usize) -> Plan {
            match plan {
                Plan::All | Plan::Nothing => plan,
                Plan::Trigrams(mut list) => {
                    list.truncate(*budget);
                    *budget -= list.len();
                    Plan::trigrams(list)
                }
                Plan::And(children) => Plan::and(children.into_iter().map(|child| cap(child, budget)).collect()),
                Plan::Or(children) => {
                    let needed: usize = children.iter().map(Plan::trigram_count).sum();
                    if needed <= *budget {
                        *budget -= needed;
                        Plan::or(children)
                    } else {
                        // Each alternative must keep something for the Or to narrow at all; give
                        // each an equal share of what is left.
                        let share = *budget / children.len().max(1);
                        if share == 0 {
                            return Plan::All;
                        }
                        let mut spent = 0;
                        let capped = children
                            .into_iter()
                            .map(|child| {
                                let mut child_budget = share;
                                let capped = cap(child, &mut child_budget);
                                spent += share - child_budget;
                                capped
                            })
                            .collect();
                        *budget -= spent;
                        Plan::or(capped)
                    }
                }
            }
        }
        let mut budget = budget;
        cap(self, &mut budget)
    }
}

/// The trigrams every one of `plans` requires outright, sorted.
fn common_required(plans: &[Plan]) -> Vec<u32> {
    let Some((first, rest)) = plans.split_first() else { return Vec::new() };
    let mut common = first.required().to_vec();
    for plan in rest {
        let required = plan.required();
        common.retain(|t| required.binary_search(t).is_ok());
    }
    common
}

/// The plan of a literal search for `text`: the trigrams of its bytes, ASCII-lowercased;
/// `All` when it is shorter than three bytes.
///
/// Sound for case-sensitive verification and for ASCII-only case-insensitive verification.
/// A caller that verifies with Unicode case folding (where `K` also matches U+212A KELVIN SIGN)
/// must plan with `plan_regex(&regex_syntax::escape(text), true)` instead.
pub fn plan_literal(text: &str) -> Plan {
    Plan::of_bytes(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::super::extract::trigram;
    use super::*;

    fn t(s: &str) -> u32 {
        let b = s.as_bytes();
        trigram(b[0], b[1], b[2])
    }

    #[test]
    fn literal_plans() {
        assert_eq!(plan_literal(""), Plan::All);
        assert_eq!(plan_literal("ab"), Plan::All);
        assert_eq!(plan_literal("abc"), Plan::Trigrams(vec![t("abc")]));
        assert_eq!(plan_literal("ABCd"), Plan::trigrams(vec![t("abc"), t("bcd")]));
        assert_eq!(plan_literal("aaaa"), Plan::Trigrams(vec![t("aaa")]));
        // Non-ASCII bytes are kept raw; two bytes of one character still need a third.
        assert_eq!(plan_literal("é"), Plan::All);
        assert_eq!(plan_literal("aé"), Plan::Trigrams(vec![0x61_C3_A9]));
    }

    #[test]
    fn and_flattens_merges_and_absorbs() {
        let a = Plan::Trigrams(vec![1, 2]);
        let b = Plan::Trigrams(vec![2, 3]);
        assert_eq!(Plan::and(vec![a.clone(), Plan::All, b.clone()]), Plan::Trigrams(vec![1, 2, 3]));
        assert_eq!(Plan::and(vec![a.clone(), Plan::Nothing]), Plan::Nothing);
        assert_eq!(Plan::and(vec![]), Plan::All);
        let or = Plan::or(vec![Plan::Trigrams(vec![1]), Plan::Trigrams(vec![9])]);
        assert_eq!(Plan::and(vec![a.clone(), or]), a);
        assert_eq!(Plan::and(vec![Plan::And(vec![a.clone()]), Plan::And(vec![b])]), Plan::Trigrams(vec![1, 2, 3]));
    }

    #[test]
    fn or_flattens_and_absorbs() {
        let a = Plan::Trigrams(vec![1, 2]);
        let b = Plan::Trigrams(vec![1, 2, 3]);
        assert_eq!(Plan::or(vec![a.clone(), b]), a);
        assert_eq!(Plan::or(vec![a.clone(), Plan::All]), Plan::All);
        assert_eq!(Plan::or(vec![a.clone(), Plan::Nothing]), a);
        assert_eq!(Plan::or(vec![]), Plan::Nothing);
        assert_eq!(Plan::or(vec![a.clone(), a.clone()]), a);
    }

    #[test]
    fn or_factors_common_trigrams_and_caps_alternatives() {
        let or = Plan::or(vec![Plan::Trigrams(vec![1, 2, 5]), Plan::Trigrams(vec![1, 3, 5])]);
        assert_eq!(
            or,
            Plan::And(vec![
                Plan::Trigrams(vec![1, 5]),
                Plan::Or(vec![Plan::Trigrams(vec![2]), Plan::Trigrams(vec![3])])
            ])
        );
        let wide = Plan::or((0..1000).map(|i| Plan::Trigrams(vec![7, 1000 + i])).collect());
        assert_eq!(wide, Plan::Trigrams(vec![7]));
        let wide = Plan::or((0..1000).map(|i| Plan::Trigrams(vec![1000 + i, 9000 + i])).collect());
        assert_eq!(wide, Plan::All);
    }

    #[test]
    fn capping_only_weakens() {
        let wide = Plan::or((0..100).map(|i| Plan::Trigrams(vec![i, i + 1000, i + 2000])).collect());
        let capped = wide.clone().capped(50);
        assert!(capped.trigram_count() <= 50);
        // Every document the full plan admits, the capped one admits too.
        for i in 0..100 {
            let doc = vec![i, i + 1000, i + 2000];
            assert!(wide.matches(&doc) && capped.matches(&doc));
        }
        assert_eq!(Plan::Trigrams((0..10).collect()).capped(3), Plan::Trigrams(vec![0, 1, 2]));
        assert_eq!(wide.capped(10), Plan::All);
    }
}
