//! The least work any `calibench run` of a reviews file must do, timed alone: the budget the
//! turn-5 time target leaves the run's own work (docs/benchmarks.md, "The floor").
//!
//! `cargo run --release --example parse_floor -- FILE OUT_DIR RUN_DIR`
//!
//! 1. reads FILE in 8 MiB blocks and hashes it with SHA-256, as the run does for its manifest;
//! 2. parses every line as JSON on two threads, as the run's two parsing threads do, but with
//!    nothing built: `serde_json` into `IgnoredAny`, which checks the syntax and keeps nothing;
//! 3. writes into OUT_DIR as many bytes as each file of RUN_DIR (a run directory of the same
//!    corpus) holds, a mebibyte at a time: what the run writes, with no formatting behind it.
//!
//! It prints the seconds of each step and the lines parsed. `benches/bench.sh ratios` runs it
//! beside the run and orjson's parse; it is a figure for a friendlier case, added, never the
//! row's figure.

use std::io::{Read, Write};
use std::sync::mpsc::sync_channel;
use std::time::Instant;

use sha2::Digest;

const BLOCK: usize = 8 << 20;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [file, out_dir, run_dir] = args.as_slice() else {
        eprintln!("usage: parse_floor FILE OUT_DIR RUN_DIR");
        std::process::exit(2);
    };
    if let Err(e) = floor(file, out_dir, run_dir) {
        eprintln!("parse_floor: {e}");
        std::process::exit(2);
    }
}

fn floor(file: &str, out_dir: &str, run_dir: &str) -> Result<(), String> {
    let sizes = sizes(run_dir)?;
    let start = Instant::now();
    let (lines, digest) = read_and_parse(file)?;
    let parsed = start.elapsed().as_secs_f64();
    let written = write_bytes(out_dir, &sizes)?;
    let total = start.elapsed().as_secs_f64();
    println!(
        "read, SHA-256 and parse of {lines} lines: {parsed:.3} s; writing {:.1} MB in {} files: {:.3} s; total {total:.3} s (sha256 {digest})",
        written as f64 / 1e6,
        sizes.len(),
        total - parsed,
    );
    Ok(())
}

/// Each regular file of `dir` by name, with its size.
fn sizes(dir: &str) -> Result<Vec<(String, u64)>, String> {
    let mut sizes = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| format!("{dir}: {e}"))? {
        let entry = entry.map_err(|e| format!("{dir}: {e}"))?;
        let meta = entry.metadata().map_err(|e| format!("{dir}: {e}"))?;
        if meta.is_file() {
            sizes.push((entry.file_name().to_string_lossy().into_owned(), meta.len()));
        }
    }
    sizes.sort();
    Ok(sizes)
}

/// Reads and hashes `file` on this thread while two threads parse its lines; the line count
/// and the digest.
fn read_and_parse(file: &str) -> Result<(usize, String), String> {
    let mut f = std::fs::File::open(file).map_err(|e| format!("{file}: {e}"))?;
    let (to_parsers, blocks) = sync_channel::<Vec<u8>>(4);
    let blocks = std::sync::Mutex::new(blocks);
    std::thread::scope(|scope| {
        let parsers: Vec<_> = (0..2)
            .map(|_| scope.spawn(|| parse_blocks(&blocks)))
            .collect();
        let mut hash = sha2::Sha256::new();
        let mut carry: Vec<u8> = Vec::new();
        loop {
            let mut block = vec![0u8; BLOCK];
            let n = f.read(&mut block).map_err(|e| format!("{file}: {e}"))?;
            if n == 0 {
                break;
            }
            block.truncate(n);
            hash.update(&block);
            // Whole lines go to the parsers; a line cut by the block's end waits for the next.
            let cut = memchr::memrchr(b'\n', &block).map_or(0, |i| i + 1);
            let mut whole = std::mem::take(&mut carry);
            whole.extend_from_slice(&block[..cut]);
            carry = block[cut..].to_vec();
            if to_parsers.send(whole).is_err() {
                break;
            }
        }
        if !carry.is_empty() {
            let _ = to_parsers.send(carry);
        }
        drop(to_parsers);
        let mut lines = 0;
        for parser in parsers {
            lines += parser.join().map_err(|_| "a parsing thread panicked")??;
        }
        Ok((lines, format!("{:x}", hash.finalize())))
    })
}

/// Parses every line of the blocks it is given; the lines parsed.
fn parse_blocks(
    blocks: &std::sync::Mutex<std::sync::mpsc::Receiver<Vec<u8>>>,
) -> Result<usize, String> {
    let mut lines = 0;
    loop {
        let block = match blocks.lock() {
            Ok(blocks) => blocks.recv(),
            Err(_) => return Err("a parsing thread panicked".into()),
        };
        let Ok(block) = block else {
            return Ok(lines);
        };
        for line in block.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            serde_json::from_slice::<serde::de::IgnoredAny>(line)
                .map_err(|e| format!("a line that is not JSON: {e}"))?;
            lines += 1;
        }
    }
}

/// Writes each `(name, size)` as a file of that many bytes under `dir`; the bytes written.
fn write_bytes(dir: &str, sizes: &[(String, u64)]) -> Result<u64, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{dir}: {e}"))?;
    let chunk = vec![b'x'; 1 << 20];
    let mut written = 0;
    for (name, size) in sizes {
        let path = std::path::Path::new(dir).join(name);
        let mut out = std::io::BufWriter::with_capacity(
            1 << 20,
            std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?,
        );
        let mut left = *size;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            out.write_all(&chunk[..n])
                .map_err(|e| format!("{}: {e}", path.display()))?;
            left -= n as u64;
        }
        out.flush()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        written += size;
    }
    Ok(written)
}
