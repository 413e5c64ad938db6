//! The one token counter (§10): OpenAI's o200k_base BPE, as implemented by GitHub's
//! `bpe-openai` crate.
//!
//! Every `token_estimate`, every `max_tokens` cut and every benchmark's token count goes
//! through `count`. Counts are exact o200k_base counts (identical to tiktoken's on 13,969
//! real source files; see ARCHITECTURE.md for why this crate and not tiktoken-rs). The
//! vocabulary takes ~50 ms to load, so a server warms it on a background thread at start
//! (`warm_up`) instead of on the first read.

/// The tokenizer's name as reported in documentation and `manage status`.
pub const TOKENIZER: &str = "o200k_base";

/// Builds the vocabulary now so the first real count is fast.
pub fn warm_up() {
    let _ = bpe_openai::o200k_base();
}

/// Tokens in `text` under o200k_base, special tokens treated as ordinary text.
pub fn count(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    bpe_openai::o200k_base().count(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_real_tokens() {
        assert_eq!(count(""), 0);
        assert_eq!(count("hello world"), 2);
        // Reference counts computed with tiktoken-rs 0.12 (o200k_base, encode_ordinary).
        assert_eq!(count("fn main() {\n    println!(\"hi\");\n}\n"), 10);
        assert_eq!(count("    let name = env::args().nth(1).unwrap_or_else(|| \"world\".to_string());"), 22);
    }
}
