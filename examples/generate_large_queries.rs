//! A large query-trace corpus for the query-replay benchmark (`benches/bench.sh`), from a fixed
//! seed: `cargo run --release --example generate_large_queries -- QUERIES OUT_DIR`.
//!
//! The queries follow the capacity-50 review's evidence profiles in its proportions (see
//! `src/generate/capacity.rs`), and the experiment is capacity-50's: flat-mean versus
//! category-max with 2,000 bootstrap replicates (without its `[[sweep]]`, which the benchmark
//! times on its own). Lines are streamed to disk.

use std::io::{BufWriter, Write};

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let usage = || std::io::Error::other("usage: generate_large_queries QUERIES OUT_DIR");
    let count: usize = args.next().and_then(|a| a.parse().ok()).ok_or_else(usage)?;
    let out = std::path::PathBuf::from(args.next().ok_or_else(usage)?);
    std::fs::create_dir_all(&out)?;
    // The benchmark times one run and one sweep apart: the example's own [[sweep]] is left out.
    let experiment = calibench::generate::CAPACITY_EXPERIMENT
        .split("\n# Which recovery gate should ship?")
        .next()
        .unwrap_or_default()
        .replace("name = \"capacity-50\"", "name = \"large-queries\"");
    std::fs::write(out.join("experiment.toml"), experiment)?;
    let mut w = BufWriter::new(std::fs::File::create(out.join("queries.jsonl"))?);
    let mut result = Ok(());
    calibench::generate::many_queries(calibench::generate::SEED, count, |line| {
        if result.is_ok() {
            result = writeln!(w, "{line}");
        }
    });
    result?;
    w.flush()
}
