//! Time from process start to a ready o200k_base tokenizer, in fresh processes.
//!
//! `old` is `bpe_openai::o200k_base()` (MessagePack vocabulary + regex, one thread), `new` is
//! `loupe_core::tokens::warm_up()`, each called on a spawned thread as `loupe serve` does.
//! `ready` is the wall time from the child's `main` to a loaded tokenizer; `loader thread
//! on-CPU` is the CPU time of the thread that loads it (Linux), roughly what `ready` would be
//! on an idle machine, since that thread is the critical path. Each run is a fresh child
//! process; the variants alternate so that background load hits both alike.
//!
//! ```text
//! cargo run --release -p loupe-core --example tokenizer_load -- [runs]
//! ```

use std::env;
use std::process::Command;
use std::time::Instant;

fn main() {
    let start = Instant::now();
    let args: Vec<String> = env::args().collect();
    if args.get(1).map(String::as_str) == Some("--child") {
        // Like `loupe serve`, which warms the tokenizer on its own thread.
        let variant = args.get(2).cloned().unwrap_or_default();
        let loader = std::thread::spawn(move || {
            let cpu = thread_cpu_micros();
            match variant.as_str() {
                "old" => drop(bpe_openai::o200k_base()),
                "new" => loupe_core::tokens::warm_up(),
                other => panic!("unknown variant {other:?}"),
            }
            thread_cpu_micros() - cpu
        });
        let cpu = loader.join().expect("the tokenizer loads");
        let micros = start.elapsed().as_micros();
        // Counted after the clock stops: this only proves the tokenizer works.
        let count = match args[2].as_str() {
            "old" => bpe_openai::o200k_base().count("hello world"),
            _ => loupe_core::tokens::count("hello world"),
        };
        assert_eq!(count, 2);
        println!("{micros} {cpu}");
        return;
    }

    let runs: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(30);
    let exe = env::current_exe().expect("current exe");
    let mut ready = [Vec::new(), Vec::new()];
    let mut cpu = [Vec::new(), Vec::new()];
    let mut wall = [Vec::new(), Vec::new()];
    for _ in 0..runs {
        for (i, variant) in ["old", "new"].into_iter().enumerate() {
            let spawned = Instant::now();
            let out = Command::new(&exe).args(["--child", variant]).output().expect("child runs");
            let elapsed = spawned.elapsed().as_micros();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let stdout = String::from_utf8_lossy(&out.stdout);
            let mut fields = stdout.split_whitespace().map(|f| f.parse::<u128>().expect("micros"));
            ready[i].push(fields.next().expect("ready"));
            cpu[i].push(fields.next().expect("cpu"));
            wall[i].push(elapsed);
        }
    }
    println!("{runs} fresh processes per variant; ms (p50 / min / max)");
    for (i, variant) in ["old", "new"].into_iter().enumerate() {
        println!(
            "{variant}: ready {}   loader thread on-CPU {}   spawn->exit {}",
            summary(&mut ready[i]),
            summary(&mut cpu[i]),
            summary(&mut wall[i])
        );
    }
}

fn summary(micros: &mut [u128]) -> String {
    micros.sort_unstable();
    let ms = |us: u128| us as f64 / 1000.0;
    format!("{:6.1} / {:6.1} / {:6.1}", ms(micros[micros.len() / 2]), ms(micros[0]), ms(micros[micros.len() - 1]))
}

/// Time this thread has spent on a CPU, from `/proc/thread-self/schedstat` (Linux); unlike
/// the wall clock it does not grow while other processes hold the cores.
fn thread_cpu_micros() -> u128 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u128>().ok())
        .map_or(0, |ns| ns / 1000)
}
