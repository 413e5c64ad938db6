//! The one token counter (§10): OpenAI's o200k_base BPE, as implemented by GitHub's
//! `bpe-openai` crate.
//!
//! Every `token_estimate`, every `max_tokens` cut and every benchmark's token count goes
//! through `count`. Counts are exact o200k_base counts (identical to tiktoken's on 13,969
//! real source files; see docs/decisions.md for why this crate and not tiktoken-rs).
//!
//! The vocabulary and the tokenizer are bpe-openai's, but not its loader:
//! `bpe_openai::o200k_base()` decodes a 32 MB MessagePack dictionary and then compiles the
//! pre-tokenization regex, ~45 ms on one thread, and the first answer after start waits
//! for it. Instead `build.rs` (a build script with bpe-openai as build-dependency) loads
//! that vocabulary once at build time and writes the same `BytePairEncoding` as a flat
//! little-endian table (`$OUT_DIR/o200k_base.table`, embedded below with `include_bytes!`);
//! `table` reads it back through `serde` with no type tags to decode and the automata
//! borrowed straight from the embedded bytes. Meanwhile a second thread touches the
//! table's pages and compiles the regex (bpe-openai's o200k patterns, copied in
//! `PATTERNS`), and the two halves are joined into a `bpe_openai::Tokenizer`. The test
//! `counts_match_bpe_openai_o200k_base` proves the counts identical to
//! `bpe_openai::o200k_base()`'s. Loading still takes ~26 ms of CPU (docs/decisions.md,
//! `examples/tokenizer_load.rs`), so a server warms it on a background thread at start
//! (`warm_up`) instead of on the first read.

use std::sync::LazyLock;

use bpe_openai::Tokenizer;
use bpe_openai::byte_pair_encoding::BytePairEncoding;

mod table;

/// The tokenizer's name as reported in documentation and `manage status`.
pub const TOKENIZER: &str = "o200k_base";

/// bpe-openai's o200k_base vocabulary in `table`'s format, written by `build.rs`.
static O200K_TABLE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.table"));

/// bpe-openai 0.3's o200k_base pre-tokenization patterns, verbatim; the `bool` marks a
/// pattern whose last character is a look-ahead (see `Tokenizer::new_lookahead`).
const PATTERNS: [(&str, bool); 3] = [
    (
        concat!(
            "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
            "|",
            "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
            "|",
            "\\p{N}{1,3}",
            "|",
            " ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*",
            "|",
            "\\s*[\\r\\n]+",
            "|",
            "\\s+$",
        ),
        false,
    ),
    ("\\s+\\s", true),
    ("\\s+", false),
];

static O200K: LazyLock<Tokenizer> = LazyLock::new(load);

/// Decodes the vocabulary on this thread while a helper prefetches the table and compiles
/// the regex.
fn load() -> Tokenizer {
    let helper = std::thread::Builder::new().name("loupe-tokens".into()).spawn(|| {
        prefetch(O200K_TABLE);
        pretokenizer()
    });
    let bpe = table::decode(O200K_TABLE).expect("the embedded o200k_base table is valid");
    let pre = match helper {
        Ok(handle) => handle.join().expect("the o200k_base regex compiles"),
        Err(_) => pretokenizer(),
    };
    let mut tokenizer = Tokenizer::new(bpe, None, false).expect("no pattern to compile");
    tokenizer.pre = pre;
    tokenizer
}

/// Reads one byte of every page of `bytes`, last page first, so that the page faults that
/// map the embedded table happen on this thread rather than on the one decoding it (which
/// starts at the front).
fn prefetch(bytes: &[u8]) {
    let mut sum = 0u8;
    for byte in bytes.iter().rev().step_by(4096) {
        sum = sum.wrapping_add(*byte);
    }
    std::hint::black_box(sum);
}

/// Compiles the pre-tokenization regex. bpe-openai only builds one inside a `Tokenizer`,
/// so it gets a one-token placeholder vocabulary that is dropped at once.
fn pretokenizer() -> Option<bpe_openai::Pretokenizer> {
    let placeholder = BytePairEncoding::from_dictionary([vec![b' ']], None);
    Tokenizer::new_lookahead(placeholder, &PATTERNS, false).expect("the o200k_base regex compiles").pre
}

/// Builds the vocabulary now so the first real count is fast.
pub fn warm_up() {
    LazyLock::force(&O200K);
}

/// Tokens in `text` under o200k_base, special tokens treated as ordinary text.
pub fn count(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    O200K.count(text)
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

    /// Texts that exercise every branch of the pre-tokenizer and the BPE: code in several
    /// languages, scripts with and without case, combining marks, emoji, digit runs,
    /// whitespace runs of every kind (at the end of the text too), long lines.
    fn varied_texts() -> Vec<String> {
        let mut texts: Vec<String> = [
            "",
            " ",
            "\n",
            "hello world",
            "fn main() {\n    println!(\"hi\");\n}\n",
            "def f(x):\n\treturn x ** 2  # square\n\n\nclass A(object):\n    pass\n",
            "const x = async (a, b) => { await fetch(`/api/${a}?b=${b}`); };\n// TODO: ünïcödé\n",
            "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"héllo\", 42)\n}\n",
            "#include <stdio.h>\nint main(void){printf(\"%d\\n\",0x7fffffff);return 0;}\r\n",
            "public static void main(String[] args) throws IOException { List<Map<String,Integer>> m; }",
            "SELECT id, COUNT(*) FROM users WHERE name LIKE '%o''brien%' GROUP BY 1;\n",
            "#!/bin/sh\nset -euo pipefail\nfor f in *.rs; do echo \"$f\" | sed 's/a/b/g'; done\n",
            "{\"key\": [1, 2.5, -3e10, true, null], \"nested\": {\"é\": \"\\u00e9\"}}",
            "<div class=\"x\">&nbsp;<br/></div>\n<!-- comment -->",
            "I'm sure they'll say it's what we'd've DONE, WE'LL SEE, It'S fine.",
            "1234567890 12 123 1234 3.14159 1,000,000 0xDEADBEEF 1e-9",
            "日本語のテキストと中文文本，还有한국어 텍스트。",
            "Привет, мир! Ελληνικά κείμενα. مرحبا بالعالم. שלום עולם. नमस्ते दुनिया",
            "e\u{301}te\u{301} cafe\u{301} n\u{303} Å Å ﬁ ＡＢＣ ǅungla",
            "👨‍👩‍👧‍👦 🏳️‍🌈 👍🏽 ❤️ 🇫🇷 emoji😀text",
            "\u{feff}\u{200b}zero\u{200d}width\u{a0}nbsp\u{3000}ideographic\u{2028}ls",
            "trailing spaces   ",
            "trailing newlines\n\n\n",
            "\t\t\tindent\n        \n    \r\n\r\n  \t \n",
            "   leading and   interior    runs     of      spaces",
            "a\r\nb\rc\n\rd",
            "'s 's 'S 'll 'LL 'Ll x's X'S",
            "path/to/file.rs:12:34 https://example.com/a/b?c=d&e=f#g C:\\Users\\x\\y",
            "!!!??? ... ---- ==== //// \\\\\\\\ ;;;; ~~~~ ^^^^ ```rust\n```",
        ]
        .into_iter()
        .map(String::from)
        .collect();
        texts.push(" ".repeat(10_000));
        texts.push("\n".repeat(5_000));
        texts.push(format!("{}\n", "x".repeat(20_000)));
        texts.push("0123456789".repeat(2_000));
        texts.push("é".repeat(5_000));
        texts.push("ab ".repeat(7_000) + "   ");
        texts.push((0..4_000).map(|i: u32| char::from_u32(0x4e00 + i * 7 % 20_000).unwrap_or('?')).collect());
        // Pseudo-random mixtures of the characters above, deterministic.
        let alphabet: Vec<char> = "aZé日 \t\n\r0'sLL.,-_/\\{}()😀\u{301}\u{a0}Ωж9".chars().collect();
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for len in (1..400).step_by(3) {
            let text = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    alphabet[(state % alphabet.len() as u64) as usize]
                })
                .collect();
            texts.push(text);
        }
        texts
    }

    /// Every source, manifest and document of the workspace, read from disk.
    fn workspace_files() -> Vec<(std::path::PathBuf, String)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut pending = vec![root];
        let mut files = Vec::new();
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                if path.is_dir() {
                    if !name.starts_with('.') && name != "target" {
                        pending.push(path);
                    }
                } else if [".rs", ".md", ".toml", ".lock", ".json"].iter().any(|e| name.ends_with(e))
                    && let Ok(text) = std::fs::read_to_string(&path)
                {
                    files.push((path, text));
                }
            }
        }
        files
    }

    #[test]
    fn counts_match_bpe_openai_o200k_base() {
        let reference = bpe_openai::o200k_base();
        let ours = &*O200K;
        assert_eq!(ours.bpe.num_tokens(), reference.bpe.num_tokens());

        let texts = varied_texts();
        for text in &texts {
            assert_eq!(count(text), reference.count(text.as_str()), "count differs for {text:?}");
            assert_eq!(ours.encode(text.as_str()), reference.encode(text.as_str()), "{text:?}");
        }

        let files = workspace_files();
        assert!(files.len() > 20, "found only {} workspace files", files.len());
        let mut total = 0;
        for (path, text) in &files {
            let expected = reference.count(text.as_str());
            assert_eq!(count(text), expected, "count differs for {}", path.display());
            total += expected;
        }
        assert!(total > 100_000, "only {total} tokens in the workspace's files");

        // Every token of the vocabulary that is text on its own, in runs of 64.
        let tokens: Vec<u32> = (0..reference.bpe.num_tokens() as u32).collect();
        for chunk in tokens.chunks(64) {
            let text: String = chunk.iter().filter_map(|&t| reference.decode(&[t])).collect();
            assert_eq!(count(&text), reference.count(text.as_str()), "count differs for {text:?}");
        }
    }
}
