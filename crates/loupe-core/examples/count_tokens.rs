//! Prints the o200k_base token count of standard input (or of each file named), as `token_estimate` counts.

use std::io::Read;

fn main() {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).expect("stdin is UTF-8");
        println!("{}", loupe_core::tokens::count(&text));
        return;
    }
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a UTF-8 file");
        println!("{}\t{file}", loupe_core::tokens::count(&text));
    }
}
