//! "Did you mean": ranking names by edit distance for FILE_NOT_FOUND (and later
//! SYMBOL_NOT_FOUND) suggestions.

/// Up to `count` names closest to `wanted`, closest first, ties by name. Names too far
/// away to be a plausible typo are left out.
pub(crate) fn closest<'a>(wanted: &str, names: &'a [String], count: usize) -> Vec<&'a str> {
    let wanted_lower = wanted.to_lowercase();
    let mut scored: Vec<(usize, &str)> = names
        .iter()
        .filter_map(|name| {
            let lower = name.to_lowercase();
            let distance = if lower.starts_with(&wanted_lower) || wanted_lower.starts_with(&lower) && !lower.is_empty()
            {
                // A prefix is a strong hint (`main` for `main.rs`).
                wanted_lower.len().abs_diff(lower.len()).min(2)
            } else {
                levenshtein(&wanted_lower, &lower)
            };
            let allowed = (wanted_lower.chars().count() / 3).max(2);
            (distance <= allowed).then_some((distance, name.as_str()))
        })
        .collect();
    scored.sort();
    scored.into_iter().take(count).map(|(_, name)| name).collect()
}

fn levenshtein(left: &str, right: &str) -> usize {
    let right_chars: Vec<char> = right.chars().collect();
    let mut previous: Vec<usize> = (0..=right_chars.len()).collect();
    let mut current = vec![0; right_chars.len() + 1];
    for (i, left_char) in left.chars().enumerate() {
        current[0] = i + 1;
        for (j, right_char) in right_chars.iter().enumerate() {
            let substitution = previous[j] + usize::from(left_char != *right_char);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[right_chars.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_and_prefixes_rank_first() {
        let names: Vec<String> =
            ["main.rs", "lib.rs", "mod.rs", "completely_different.py"].iter().map(|s| s.to_string()).collect();
        assert_eq!(closest("mian.rs", &names, 3), vec!["main.rs"]);
        assert_eq!(closest("mdo.rs", &names, 3), vec!["mod.rs"]);
        assert_eq!(closest("main", &names, 1), vec!["main.rs"]);
        assert!(closest("zzzzzzzzzz", &names, 3).is_empty());
    }
}
