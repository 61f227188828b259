//! One query with many tool calls, for the query-replay benchmark (`benches/bench.sh wide`):
//! `cargo run --release --example generate_wide_query -- TOOLS OUT_DIR`.
//!
//! An agent that searched, read and checked its way through a large code base: the tools cycle
//! through every kind, and their targets are file paths over a few thousand modules, so that
//! many targets contain others (`parser` in `parser_test`) and convergence has real matching to
//! do. Deterministic: the i-th tool depends on i alone. The experiment is capacity-50's.

use std::io::{BufWriter, Write};

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let usage = || std::io::Error::other("usage: generate_wide_query TOOLS OUT_DIR");
    let count: usize = args.next().and_then(|a| a.parse().ok()).ok_or_else(usage)?;
    let out = std::path::PathBuf::from(args.next().ok_or_else(usage)?);
    std::fs::create_dir_all(&out)?;
    let experiment = calibench::generate::CAPACITY_EXPERIMENT
        .replace("name = \"capacity-50\"", "name = \"wide-query\"");
    std::fs::write(out.join("experiment.toml"), experiment)?;

    // One recorded query; both arms of the experiment replay it.
    let mut w = BufWriter::new(std::fs::File::create(out.join("queries.jsonl"))?);
    write!(
        w,
        "{{\"query_id\": \"wide\", \"first_pass_correct\": true, \"correct\": true, \"tools\": ["
    )?;
    {
        for i in 0..count {
            let module = i % 3001;
            let target = match i % 4 {
                0 => format!("src/mod{module}/parser.rs"),
                1 => format!("src/mod{module}/parser_test_{}.rs", i % 7),
                2 => format!("mod{module}"),
                _ => format!("lib/mod{module}/util_{}.py", i % 11),
            };
            let tool = match i % 6 {
                0 => format!("{{\"tool\": \"grep\", \"target\": \"{target}\", \"hits\": {}}}", i % 5),
                1 => format!("{{\"tool\": \"find\", \"target\": \"{target}\", \"hits\": {}}}", i % 3),
                2 => format!("{{\"tool\": \"read\", \"target\": \"{target}\", \"files\": {}, \"relevant\": {}}}", i % 4, i % 2),
                3 => format!("{{\"tool\": \"references\", \"target\": \"{target}\", \"hits\": {}}}", i % 2),
                4 => format!("{{\"tool\": \"git\", \"target\": \"{target}\", \"hits\": {}}}", i % 3),
                _ => format!("{{\"tool\": \"discovery\", \"target\": \"{target}\", \"factors\": {}}}", i % 5),
            };
            if i > 0 {
                w.write_all(b", ")?;
            }
            w.write_all(tool.as_bytes())?;
        }
        writeln!(w, "]}}")?;
    }
    w.flush()
}
