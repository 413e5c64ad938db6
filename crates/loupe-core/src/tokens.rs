//! The one token counter (§10): OpenAI's o200k_base BPE via tiktoken-rs.
//!
//! Every `token_estimate`, every `max_tokens` cut and every benchmark's token count goes
//! through `count`. The vocabulary takes a while to build, so a server warms it on a
//! background thread at start (`warm_up`) instead of on the first read.

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

/// The tokenizer's name as reported in documentation and `manage status`.
pub const TOKENIZER: &str = "o200k_base";

fn bpe() -> &'static CoreBPE {
    static BPE: OnceLock<&'static CoreBPE> = OnceLock::new();
    BPE.get_or_init(tiktoken_rs::o200k_base_singleton)
}

/// Builds the vocabulary now so the first real count is fast.
pub fn warm_up() {
    let _ = bpe();
}

/// Tokens in `text` under o200k_base, special tokens treated as ordinary text.
pub fn count(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    bpe().count_ordinary(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_real_tokens() {
        assert_eq!(count(""), 0);
        assert_eq!(count("hello world"), 2);
        let code = "fn main() {\n    println!(\"hi\");\n}\n";
        assert!(count(code) > 5 && count(code) < code.len());
    }
}
