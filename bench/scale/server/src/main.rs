//! The scale spike's remote engine: one tantivy index of a corpus (a document per file, its
//! content indexed as lower-cased character trigrams and stored), served over HTTP the way a
//! federated code-search engine answers loupe: candidates from the n-gram index, then every
//! candidate verified line by line, so the answer is line matches with exact totals (or a lower
//! bound, said so, when the wall-time budget runs out).
//!
//! ```text
//! scale-spike index --root DIR --index DIR --repo NAME --version V   # file list: rg --files
//! scale-spike serve --index DIR --addr 127.0.0.1:PORT
//!   GET /search?q=Q&kind=literal|regex&case=auto|yes|no&path=PREFIX&offset=N&limit=N
//!               &max_wall_ms=N&max_matches=N   (either stops verification: the totals are then
//!                                               a lower bound, as Zoekt's MaxWallTime and
//!                                               TotalMaxMatchCount make them)
//!   GET /file?path=P&start=A&end=B        (a window of a stored file: how a remote hit is read)
//!   GET /healthz
//! ```
//!
//! Bench code for `bench/scale/`, not part of loupe: see `bench/scale/README.md`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use regex::{Regex, RegexBuilder};
use regex_syntax::hir::{Hir, HirKind};
use serde_json::{Value, json};
use tantivy::collector::TopDocs;
use tantivy::query::{AllQuery, BooleanQuery, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions, Value as _};
use tantivy::tokenizer::{LowerCaser, NgramTokenizer, TextAnalyzer};
use tantivy::{DocAddress, Index, IndexReader, IndexWriter, TantivyDocument, Term, doc};

const TOKENIZER: &str = "trigram";
/// Files over this size are not indexed (rg is run with the same `--max-filesize`).
const MAX_FILE_BYTES: u64 = 1 << 20;

type Result<T> = std::result::Result<T, String>;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args.first().map(String::as_str) {
        Some("index") => index_command(&args[1..]),
        Some("serve") => serve_command(&args[1..]),
        _ => Err(
            "usage: scale-spike index --root DIR --index DIR --repo NAME --version V | serve --index DIR --addr ADDR"
                .into(),
        ),
    };
    if let Err(error) = outcome {
        eprintln!("scale-spike: {error}");
        std::process::exit(2);
    }
}

fn flag(args: &[String], name: &str) -> Result<String> {
    args.iter()
        .position(|arg| arg == name)
        .and_then(|at| args.get(at + 1))
        .cloned()
        .ok_or_else(|| format!("missing {name}"))
}

fn schema() -> (Schema, Field, Field) {
    let mut builder = Schema::builder();
    let path = builder.add_text_field("path", STRING | STORED);
    let indexing = TextFieldIndexing::default().set_tokenizer(TOKENIZER).set_index_option(IndexRecordOption::WithFreqs);
    let content = builder.add_text_field("content", TextOptions::default().set_indexing_options(indexing).set_stored());
    (builder.build(), path, content)
}

fn register_tokenizer(index: &Index) -> Result<()> {
    let trigrams = NgramTokenizer::new(3, 3, false).map_err(|error| error.to_string())?;
    index.tokenizers().register(TOKENIZER, TextAnalyzer::builder(trigrams).filter(LowerCaser).build());
    Ok(())
}

/// `rg --files` with the flags the bench's `rg` runs use, so both see the same files.
fn list_files(root: &Path) -> Result<Vec<String>> {
    let output = Command::new("rg")
        .current_dir(root)
        .args(["--files", "--hidden", "--no-ignore-parent", "--max-filesize", "1M", "--no-messages", "."])
        .stderr(Stdio::null())
        .output()
        .map_err(|error| format!("cannot run rg: {error}"))?;
    let text = String::from_utf8_lossy(&output.stdout);
    let mut files: Vec<String> = text.lines().map(|line| line.strip_prefix("./").unwrap_or(line).to_owned()).collect();
    files.sort();
    Ok(files)
}

fn index_command(args: &[String]) -> Result<()> {
    let root = PathBuf::from(flag(args, "--root")?);
    let index_dir = PathBuf::from(flag(args, "--index")?);
    let repo = flag(args, "--repo")?;
    let version = flag(args, "--version")?;
    let threads: usize = flag(args, "--threads").ok().and_then(|value| value.parse().ok()).unwrap_or(2);
    let started = Instant::now();
    std::fs::create_dir_all(&index_dir).map_err(|error| error.to_string())?;
    let (schema, path_field, content_field) = schema();
    let index = Index::create_in_dir(&index_dir, schema).map_err(|error| error.to_string())?;
    register_tokenizer(&index)?;
    let mut writer: IndexWriter =
        index.writer_with_num_threads(threads, 400_000_000).map_err(|error| error.to_string())?;
    let (mut files, mut bytes, mut skipped_binary) = (0u64, 0u64, 0u64);
    for relative in list_files(&root)? {
        let full = root.join(&relative);
        let Ok(metadata) = std::fs::metadata(&full) else { continue };
        if !metadata.is_file() || metadata.len() > MAX_FILE_BYTES {
            continue;
        }
        let Ok(raw) = std::fs::read(&full) else { continue };
        if raw[..raw.len().min(8192)].contains(&0) {
            skipped_binary += 1;
            continue;
        }
        bytes += raw.len() as u64;
        files += 1;
        let text = String::from_utf8_lossy(&raw).into_owned();
        writer.add_document(doc!(path_field => relative, content_field => text)).map_err(|error| error.to_string())?;
    }
    writer.commit().map_err(|error| error.to_string())?;
    writer.wait_merging_threads().map_err(|error| error.to_string())?;
    let meta = json!({"repo": repo, "version": version});
    std::fs::write(index_dir.join("spike.json"), meta.to_string()).map_err(|error| error.to_string())?;
    println!(
        "{}",
        json!({"files": files, "bytes": bytes, "skipped_binary": skipped_binary,
               "millis": started.elapsed().as_secs_f64() * 1000.0})
    );
    Ok(())
}

struct Engine {
    index: Index,
    reader: IndexReader,
    path: Field,
    content: Field,
    repo: String,
    version: String,
}

fn serve_command(args: &[String]) -> Result<()> {
    let index_dir = PathBuf::from(flag(args, "--index")?);
    let addr = flag(args, "--addr")?;
    let index = Index::open_in_dir(&index_dir).map_err(|error| error.to_string())?;
    register_tokenizer(&index)?;
    let (_, path, content) = schema();
    let meta: Value = std::fs::read_to_string(index_dir.join("spike.json"))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null);
    let engine = Engine {
        reader: index.reader().map_err(|error| error.to_string())?,
        index,
        path,
        content,
        repo: meta["repo"].as_str().unwrap_or("?").to_owned(),
        version: meta["version"].as_str().unwrap_or("?").to_owned(),
    };
    // TCP_NODELAY on the listener, which accepted sockets inherit: tiny_http writes a response's
    // head and body separately, and with Nagle the body then waits for the client's delayed ACK
    // (40 ms on Linux) once a kept-alive connection leaves quick-ack mode.
    let address: std::net::SocketAddr = addr.parse().map_err(|error| format!("--addr: {error}"))?;
    let socket = socket2::Socket::new(socket2::Domain::for_address(address), socket2::Type::STREAM, None)
        .map_err(|error| error.to_string())?;
    socket.set_reuse_address(true).map_err(|error| error.to_string())?;
    socket.set_tcp_nodelay(true).map_err(|error| error.to_string())?;
    socket.bind(&address.into()).map_err(|error| error.to_string())?;
    socket.listen(128).map_err(|error| error.to_string())?;
    let listener: std::net::TcpListener = socket.into();
    let server = tiny_http::Server::from_listener(listener, None).map_err(|error| error.to_string())?;
    eprintln!("scale-spike: serving {} on http://{addr}", index_dir.display());
    for mut request in server.incoming_requests() {
        let mut body = String::new();
        let _ = request.as_reader().read_to_string(&mut body);
        let url = request.url().to_owned();
        let (route, query) = url.split_once('?').unwrap_or((url.as_str(), ""));
        let params = parse_query(query);
        let (status, answer) = match route {
            "/healthz" => (200, json!({"ok": true, "repo": engine.repo, "version": engine.version})),
            "/search" => match engine.search(&params) {
                Ok(answer) => (200, answer),
                Err(error) => (400, json!({"ok": false, "error": error})),
            },
            "/file" => match engine.file(&params) {
                Ok(answer) => (200, answer),
                Err(error) => (404, json!({"ok": false, "error": error})),
            },
            _ => (404, json!({"ok": false, "error": "unknown route"})),
        };
        let header = tiny_http::Header::from_bytes("Content-Type", "application/json").expect("static header");
        let response =
            tiny_http::Response::from_string(answer.to_string()).with_status_code(status).with_header(header);
        let _ = request.respond(response);
    }
    Ok(())
}

fn parse_query(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(key), percent_decode(value))
        })
        .collect()
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let hex = |byte: u8| (byte as char).to_digit(16).map(|digit| digit as u8);
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'+' => out.push(b' '),
            b'%' if at + 2 < bytes.len() => match (hex(bytes[at + 1]), hex(bytes[at + 2])) {
                (Some(high), Some(low)) => {
                    out.push(high * 16 + low);
                    at += 2;
                }
                _ => out.push(b'%'),
            },
            byte => out.push(byte),
        }
        at += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn param<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
}

/// rg's smart case: case-insensitive unless the pattern has an upper-case literal character
/// (an escape such as `\W` is not one).
fn smart_case_insensitive(pattern: &str, regex: bool) -> bool {
    let mut chars = pattern.chars();
    while let Some(char) = chars.next() {
        if regex && char == '\\' {
            chars.next();
            continue;
        }
        if char.is_uppercase() {
            return false;
        }
    }
    true
}

/// The literal runs every match must contain (an AND), from the regex's syntax tree.
/// Alternations and optional parts contribute nothing: the plan may only narrow soundly.
fn required_literals(hir: &Hir, out: &mut Vec<String>) {
    match hir.kind() {
        HirKind::Literal(literal) => out.push(String::from_utf8_lossy(&literal.0).into_owned()),
        HirKind::Capture(capture) => required_literals(&capture.sub, out),
        HirKind::Repetition(repetition) if repetition.min >= 1 => required_literals(&repetition.sub, out),
        HirKind::Concat(parts) => {
            let mut run = String::new();
            for part in parts {
                if let HirKind::Literal(literal) = part.kind() {
                    run.push_str(&String::from_utf8_lossy(&literal.0));
                } else {
                    if !run.is_empty() {
                        out.push(std::mem::take(&mut run));
                    }
                    required_literals(part, out);
                }
            }
            if !run.is_empty() {
                out.push(run);
            }
        }
        _ => {}
    }
}

fn trigrams(literals: &[String]) -> BTreeSet<String> {
    let mut grams = BTreeSet::new();
    for literal in literals {
        let chars: Vec<char> = literal.to_lowercase().chars().collect();
        for window in chars.windows(3) {
            grams.insert(window.iter().collect());
        }
    }
    grams
}

/// The start offset and 1-based number of the line holding `offset`, counted on from an
/// earlier line start `from` (matches come in order, so a file is walked once).
fn line_at(text: &str, from: (usize, usize), offset: usize) -> (usize, usize) {
    let (mut start, mut number) = from;
    for (at, byte) in text.as_bytes()[start..offset].iter().enumerate() {
        if *byte == b'\n' {
            number += 1;
            start = from.0 + at + 1;
        }
    }
    (start, number)
}

impl Engine {
    fn search(&self, params: &[(String, String)]) -> Result<Value> {
        let started = Instant::now();
        let query = param(params, "q").ok_or("q is required")?;
        if query.is_empty() {
            return Err("q is empty".into());
        }
        let regex_kind = match param(params, "kind").unwrap_or("literal") {
            "literal" => false,
            "regex" => true,
            other => return Err(format!("kind must be literal or regex, not {other}")),
        };
        let insensitive = match param(params, "case").unwrap_or("auto") {
            "auto" => smart_case_insensitive(query, regex_kind),
            "yes" => false,
            "no" => true,
            other => return Err(format!("case must be auto, yes or no, not {other}")),
        };
        let offset: usize = param(params, "offset").and_then(|value| value.parse().ok()).unwrap_or(0);
        let limit: usize = param(params, "limit").and_then(|value| value.parse().ok()).unwrap_or(20).min(1000);
        let max_wall = param(params, "max_wall_ms").and_then(|value| value.parse().ok()).map(Duration::from_millis);
        let max_matches: usize =
            param(params, "max_matches").and_then(|value| value.parse().ok()).unwrap_or(usize::MAX);
        let path_prefix = param(params, "path").unwrap_or("");

        let pattern = if regex_kind { query.to_owned() } else { regex::escape(query) };
        let scanner: Regex = RegexBuilder::new(&pattern)
            .case_insensitive(insensitive)
            .build()
            .map_err(|error| format!("invalid regex: {error}"))?;
        let literals = if regex_kind {
            let hir = regex_syntax::Parser::new().parse(query).map_err(|error| format!("invalid regex: {error}"))?;
            let mut literals = Vec::new();
            required_literals(&hir, &mut literals);
            literals
        } else {
            vec![query.to_owned()]
        };
        let grams = trigrams(&literals);
        let planned = started.elapsed();

        let searcher = self.reader.searcher();
        let tantivy_query: Box<dyn Query> = if grams.is_empty() {
            Box::new(AllQuery)
        } else {
            let terms = grams
                .iter()
                .map(|gram| {
                    Box::new(TermQuery::new(Term::from_field_text(self.content, gram), IndexRecordOption::WithFreqs))
                        as Box<dyn Query>
                })
                .collect();
            Box::new(BooleanQuery::intersection(terms))
        };
        let all = (searcher.num_docs() as usize).max(1);
        let candidates: Vec<(f32, DocAddress)> = searcher
            .search(&tantivy_query, &TopDocs::with_limit(all).order_by_score())
            .map_err(|error| error.to_string())?;
        let candidates_took = started.elapsed() - planned;

        let (mut hits, mut total_lines, mut total_files, mut timed_out, mut capped, mut verified) =
            (Vec::new(), 0usize, 0usize, false, false, 0usize);
        for (score, address) in &candidates {
            if max_wall.is_some_and(|wall| started.elapsed() > wall) {
                timed_out = true;
                break;
            }
            if total_lines >= max_matches {
                capped = true;
                break;
            }
            let document: TantivyDocument = searcher.doc(*address).map_err(|error| error.to_string())?;
            let path = document.get_first(self.path).and_then(|value| value.as_str()).unwrap_or("");
            if !path.starts_with(path_prefix) {
                continue;
            }
            verified += 1;
            let text = document.get_first(self.content).and_then(|value| value.as_str()).unwrap_or("");
            let mut in_file = 0usize;
            let mut position = 0usize;
            let mut line_start = (0usize, 1usize);
            while let Some(found) = scanner.find_at(text, position) {
                line_start = line_at(text, line_start, found.start());
                let (start, number) = line_start;
                let end = text[start..].find('\n').map_or(text.len(), |at| start + at);
                let line = text[start..end].strip_suffix('\r').unwrap_or(&text[start..end]);
                // rg matches within a line: a match that runs past the line's end is checked
                // again on the line alone.
                if found.end() <= end || scanner.is_match(line) {
                    in_file += 1;
                    let rank = total_lines;
                    total_lines += 1;
                    if rank >= offset && rank < offset + limit {
                        hits.push(json!({"path": path, "line": number, "text": line, "doc_score": score}));
                    }
                }
                position = end + 1;
                if position > text.len() {
                    break;
                }
            }
            if in_file > 0 {
                total_files += 1;
            }
        }
        let generation = self.index.load_metas().map(|metas| metas.opstamp).unwrap_or(0);
        Ok(json!({
            "ok": true,
            "engine": "tantivy 0.27 (trigram) + scale-spike front",
            "repo": self.repo,
            "version": self.version,
            "generation": generation,
            "query": query,
            "kind": if regex_kind { "regex" } else { "literal" },
            "case_insensitive": insensitive,
            "trigrams": grams.len(),
            "candidates": candidates.len(),
            "verified": verified,
            "total_lines": total_lines,
            "total_files": total_files,
            "lower_bound": timed_out || capped,
            "timed_out": timed_out,
            "capped": capped,
            "offset": offset,
            "hits": hits,
            "took_us": {"plan": planned.as_micros() as u64, "candidates": candidates_took.as_micros() as u64,
                        "total": started.elapsed().as_micros() as u64},
        }))
    }

    fn file(&self, params: &[(String, String)]) -> Result<Value> {
        let wanted = param(params, "path").ok_or("path is required")?;
        let start: usize = param(params, "start").and_then(|value| value.parse().ok()).unwrap_or(1).max(1);
        let end: usize = param(params, "end").and_then(|value| value.parse().ok()).unwrap_or(start + 39);
        let searcher = self.reader.searcher();
        let query = TermQuery::new(Term::from_field_text(self.path, wanted), IndexRecordOption::Basic);
        let found =
            searcher.search(&query, &TopDocs::with_limit(1).order_by_score()).map_err(|error| error.to_string())?;
        let (_, address) = found.first().ok_or_else(|| format!("{wanted} is not in the index"))?;
        let document: TantivyDocument = searcher.doc(*address).map_err(|error| error.to_string())?;
        let text = document.get_first(self.content).and_then(|value| value.as_str()).unwrap_or("");
        let total = text.lines().count();
        let lines: Vec<Value> = text
            .lines()
            .enumerate()
            .skip(start - 1)
            .take(end.saturating_sub(start) + 1)
            .map(|(at, line)| json!([at + 1, line]))
            .collect();
        Ok(json!({"ok": true, "repo": self.repo, "version": self.version, "path": wanted,
                  "total_lines": total, "lines": lines}))
    }
}
