//! Reading a corpus's files, each recorded for the run's manifest (its path, SHA-256 and size):
//! whole, or a block of whole lines at a time on a thread of its own, parsed on worker threads
//! while the next block is read ([`stream`]), so that a large file is never held whole.

use std::path::Path;

use sha2::{Digest, Sha256};

use crate::error::Error;
pub use crate::rundir::manifest::InputFile;

/// Reads a whole file, recording it for the manifest.
pub fn read(path: &Path, inputs: &mut Vec<InputFile>) -> Result<Vec<u8>, Error> {
    let bytes = std::fs::read(path).map_err(|e| Error::read(path, e))?;
    inputs.push(InputFile {
        path: path.display().to_string(),
        sha256: format!("{:x}", Sha256::digest(&bytes)),
        bytes: bytes.len(),
    });
    Ok(bytes)
}

/// Reads `path` a block of whole lines at a time on a thread of its own, hashing it for the
/// manifest as it goes, and turns each block into a `T` by `per_block(first_line, block)` on
/// worker threads, one per core (a UTF-8 byte-order mark before the first line is skipped, as
/// [`crate::corpus::nonblank_lines`] skips it). `consume` takes the blocks' results here, in file
/// order, while the next blocks are read and parsed: a large file is never held whole, and
/// reading overlaps checking.
pub fn stream<T: Send, R>(
    path: &Path,
    inputs: &mut Vec<InputFile>,
    per_block: impl Fn(u64, &[u8]) -> T + Sync,
    consume: impl FnOnce(&mut dyn Iterator<Item = T>) -> R,
) -> Result<R, Error> {
    stream_from(path, Mark::default(), inputs, per_block, consume).map(|(r, _)| r)
}

/// Where reading a file starts: a byte offset at the start of a line, and how many lines come
/// before it. A sequential collection's look reads only what its batch appended to a stage's
/// file, its lines numbered as the whole file numbers them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mark {
    pub byte: u64,
    pub lines: u64,
}

impl Mark {
    /// The mark after `bytes`, read from this one.
    pub fn after(self, bytes: &[u8]) -> Mark {
        Mark {
            byte: self.byte + bytes.len() as u64,
            lines: self.lines + memchr::memchr_iter(b'\n', bytes).count() as u64,
        }
    }
}

/// [`stream`] from the mark `from` on (the lines before it are neither read nor hashed), with
/// the mark at the end of what was read.
pub fn stream_from<T: Send, R>(
    path: &Path,
    from: Mark,
    inputs: &mut Vec<InputFile>,
    per_block: impl Fn(u64, &[u8]) -> T + Sync,
    consume: impl FnOnce(&mut dyn Iterator<Item = T>) -> R,
) -> Result<(R, Mark), Error> {
    // A quarter of a megabyte: a few hundred returns, small next to the file and large next to
    // a line. Each worker holds a block waiting, one being parsed and one parsed. What a block
    // becomes follows the findings it holds, not its bytes: a finding written `{}` is three
    // bytes and a checked record of about two hundred, so on such input the block size is what
    // bounds memory (a thousand returns of 10,000 `{}` findings peaked at 445 MB with 1 MB
    // blocks, 170 MB with these; docs/benchmarks.md). The million-finding run is as fast.
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
    stream_by(1 << 18, workers, (path, from), inputs, per_block, consume)
}

/// The most lines a block holds. A block's result holds something per line (an error, for a
/// line that is not a return), so a block of four megabytes of two-byte lines would hold two
/// million of them; real returns are far longer than 256 bytes, so the byte size binds first.
const BLOCK_LINES: usize = 16_384;

/// [`stream`], reading `block_size` bytes at a time and parsing on `workers` threads. Block `i`
/// goes to worker `i % workers` and its result is taken from that worker's channel in turn, so
/// the results arrive in file order without any reordering.
fn stream_by<T: Send, R>(
    block_size: usize,
    workers: usize,
    (path, from): (&Path, Mark),
    inputs: &mut Vec<InputFile>,
    per_block: impl Fn(u64, &[u8]) -> T + Sync,
    consume: impl FnOnce(&mut dyn Iterator<Item = T>) -> R,
) -> Result<(R, Mark), Error> {
    use std::sync::mpsc::{channel, sync_channel};
    let workers = workers.max(1);
    let per_block = &per_block;
    let (result, read) = std::thread::scope(|scope| {
        // Read buffers go back to the reader once parsed, so that the same few are reused.
        let (free_tx, free_rx) = channel::<Vec<u8>>();
        let (mut to_workers, mut results) = (Vec::new(), Vec::new());
        for _ in 0..workers {
            let (blocks_tx, blocks) = sync_channel::<(u64, Vec<u8>, usize)>(1);
            let (done_tx, done) = sync_channel::<T>(1);
            let free = free_tx.clone();
            crate::threads::scoped(scope, "parse", move || {
                for (first, block, from) in blocks {
                    let parsed = per_block(first, &block[from..]);
                    let _ = free.send(block);
                    if done_tx.send(parsed).is_err() {
                        break;
                    }
                }
            });
            to_workers.push(blocks_tx);
            results.push(done);
        }
        drop(free_tx);
        let reader = crate::threads::scoped(scope, "read", move || {
            read_blocks(path, from, block_size, &to_workers, &free_rx)
        });
        let result = {
            let mut turn = 0usize;
            let results = &results;
            let mut in_order = std::iter::from_fn(|| {
                let next = results[turn % workers].recv().ok();
                turn += 1;
                next
            });
            consume(&mut in_order)
        };
        // Whatever is still in flight is let go: the workers and the reader stop at their next
        // hand-over.
        drop(results);
        let read = reader
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e));
        (result, read)
    });
    // A read that failed part way ended the blocks early: what `consume` made of them is
    // dropped with the error.
    let (sha256, bytes, newlines) = read.map_err(|e| Error::read(path, e))?;
    inputs.push(InputFile {
        path: path.display().to_string(),
        sha256,
        bytes,
    });
    let end = Mark {
        byte: from.byte + bytes as u64,
        lines: from.lines + newlines,
    };
    Ok((result, end))
}

/// The reader of [`stream_by`]: `path` from the mark `from` on, in blocks of about `block_size`
/// bytes ending at a line's end, block `i` sent to `to_workers[i % workers]`, its buffer taken
/// back from `free` when one has come back; SHA-256 of every byte read. Gives the hash, the
/// bytes read and the lines sent. Stops early, without an error, when a worker has gone (the
/// consumer stopped taking results).
fn read_blocks(
    path: &Path,
    from: Mark,
    block_size: usize,
    to_workers: &[std::sync::mpsc::SyncSender<(u64, Vec<u8>, usize)>],
    free_rx: &std::sync::mpsc::Receiver<Vec<u8>>,
) -> std::io::Result<(String, usize, u64)> {
    use std::io::{Read, Seek};
    let workers = to_workers.len();
    let mut file = std::fs::File::open(path)?;
    file.seek(std::io::SeekFrom::Start(from.byte))?;
    let mut hasher = Sha256::new();
    // A byte-order mark can only open the file.
    let (mut total, mut next_line, mut first, mut end_of_file) =
        (0, from.lines + 1, from.byte == 0, false);
    let mut buf: Vec<u8> = Vec::new();
    let (mut sent, mut newlines) = (0usize, 0u64);
    // How full the buffer is read before a block is cut: more than a block when one
    // line is longer than a block.
    let mut want = block_size;
    loop {
        let start = buf.len();
        if start < want && !end_of_file {
            // Read into the buffer's spare room (not zeroed first, as a resize would
            // zero every byte of the file once more), up to `want` or the end.
            buf.reserve_exact(want - start);
            let n = (&mut file)
                .take((want - start) as u64)
                .read_to_end(&mut buf)?;
            hasher.update(&buf[start..]);
            total += n;
            end_of_file = start + n < want;
        }
        // The block ends after its last newline, or its BLOCK_LINES-th; the rest waits
        // for the next block.
        let end = match nth_newline(&buf, BLOCK_LINES) {
            Some(i) => i + 1,
            None if end_of_file => buf.len(),
            None => match memchr::memrchr(b'\n', &buf) {
                Some(i) => i + 1,
                None => {
                    want = buf.len() + block_size;
                    continue;
                }
            },
        };
        want = block_size;
        let mut from = 0;
        if first {
            if buf.starts_with(crate::corpus::BOM) {
                from = crate::corpus::BOM.len().min(end);
            }
            first = false;
        }
        let last = end_of_file && end == buf.len();
        // The block leaves in this buffer; the rest of the last line starts the next.
        let mut next = free_rx.try_recv().unwrap_or_default();
        next.clear();
        next.extend_from_slice(&buf[end..]);
        buf.truncate(end);
        let block = std::mem::replace(&mut buf, next);
        let lines = memchr::memchr_iter(b'\n', &block[from..]).count() as u64;
        newlines += lines;
        if to_workers[sent % workers]
            .send((next_line, block, from))
            .is_err()
            || last
        {
            break;
        }
        sent += 1;
        next_line += lines;
    }
    Ok((format!("{:x}", hasher.finalize()), total, newlines))
}

/// The position of the `n`-th newline of `bytes` (`n` ≥ 1), if it has that many.
fn nth_newline(bytes: &[u8], n: usize) -> Option<usize> {
    memchr::memchr_iter(b'\n', bytes).nth(n - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::reviews;
    use crate::error::Problems;
    use crate::policy::{Mode, Scale};

    // Regression (issue 34): ten million lines of `{}` held a message per line (3.6 GB, then an
    // abort). Blocks now hold at most BLOCK_LINES lines, and the problems past the first
    // Problems::KEPT are counted, not kept; every line is still read and numbered.
    #[test]
    fn a_file_of_many_bad_lines_is_read_in_bounded_blocks_and_its_problems_counted() {
        let n = 3 * BLOCK_LINES + 5;
        let text = format!(
            "{}{}\n",
            "{}\n".repeat(n),
            r#"{"target": "t", "arm": "b", "reviewer": "r", "findings": []}"#
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("reviews.jsonl");
        std::fs::write(&path, &text).unwrap();
        let wants = [("b".to_string(), Scale::Float)];
        let blocks = std::sync::Mutex::new(Vec::new());
        let parsed = stream(
            &path,
            &mut Vec::new(),
            |first, block| {
                let lines = block.iter().filter(|&&b| b == b'\n').count();
                blocks.lock().unwrap().push((first, lines));
                reviews::read_block("r", first, block)
            },
            |lines| {
                reviews::check_for(
                    "r",
                    lines.flatten(),
                    &reviews::Reading::new(Mode::Doc, &wants),
                    reviews::Index::without_ids(),
                )
            },
        )
        .unwrap();
        assert_eq!(parsed.problems.total(), n as u64);
        assert_eq!(parsed.problems.len(), Problems::KEPT);
        assert_eq!(parsed.problems.more(), (n - Problems::KEPT) as u64);
        assert_eq!(
            parsed.problems[Problems::KEPT - 1].line,
            Some(Problems::KEPT as u64)
        );
        // The return after them is read, on its own line number.
        assert_eq!(parsed.selections[0].returns[0].line, n as u64 + 1);
        // Workers parse blocks side by side: in the order of their first lines, they tile the file.
        let mut blocks = blocks.into_inner().unwrap();
        blocks.sort_unstable();
        assert!(blocks.len() >= 4, "{blocks:?}");
        let mut next = 1;
        for (first, lines) in blocks {
            assert_eq!(first, next);
            assert!(lines <= BLOCK_LINES);
            next += lines as u64;
        }
    }

    // Read in blocks smaller than a line, on one worker or several, the file gives the same
    // returns, refusals (with their line numbers), malformed findings and hash as read whole,
    // whether its findings are checked on the workers or after; the mark before the first line
    // is skipped, and a last line without a newline is read. A repeated id is malformed on
    // its second line, and a source two arms read on two scales is checked on both.
    #[test]
    fn a_file_streamed_in_small_blocks_reads_as_it_does_whole() {
        let finding = |id: &str, confidence: &str| {
            format!(
                r#"{{"id": "{id}", "title": "T {id}", "severity": "P1", "section": "S", "finding_type": "error", "autofix_class": "manual", "confidence": {confidence}}}"#
            )
        };
        let text = format!(
            "\u{feff}{{\"target\": \"t\", \"arm\": \"b\", \"reviewer\": \"r\", \"findings\": [{{\"title\": 5}}]}}\r\n\n\
             not json\n   \n\
             {{\"target\": \"t\", \"arm\": \"b\", \"reviewer\": \"s\", \"findings\": []}}\n\
             {{\"target\": \"t\", \"arm\": \"b\", \"reviewer\": \"s\", \"findings\": []}}\n\
             {{\"target\": \"u\", \"arm\": \"b\", \"reviewer\": \"r\", \"findings\": [{}, {}]}}\n\
             {{\"target\": \"u\", \"arm\": \"c\", \"reviewer\": \"r\", \"findings\": [{}, {}]}}\n\
             {{\"target\": \"v\", \"arm\": \"b\", \"reviewer\": \"q\", \"findings\": [{}]}}",
            finding("x", "0.5"),
            finding("y", "75"),
            finding("z", "0.5"),
            finding("x", "0.5"),
            finding("w", "100"),
        );
        let dir = std::env::temp_dir().join(format!("calibench-stream-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("reviews.jsonl");
        std::fs::write(&path, &text).unwrap();
        let wants = [
            ("b".to_string(), Scale::Float),
            ("b".to_string(), Scale::Anchor),
            ("c".to_string(), Scale::Float),
        ];
        let whole = reviews::parse_for("r", text.as_bytes(), Mode::Doc, &wants);
        assert_eq!(whole.problems.len(), 2, "{:?}", whole.problems);
        assert_eq!(whole.selections[0].returns.len(), 4);
        let malformed = |sel: usize| -> Vec<String> {
            let returns = &whole.selections[sel].returns;
            let list = returns.iter().flat_map(|r| r.malformed.iter());
            list.map(|m| format!("{} {}", m.line, m.reason)).collect()
        };
        let off = |line: u64, value: u32| {
            format!("{line} {value} is off the float scale: a number in [0, 1] is expected")
        };
        assert_eq!(
            malformed(0),
            [
                "1 must be a string, not a number".to_string(),
                off(7, 75),
                off(9, 100)
            ]
        );
        assert_eq!(
            malformed(2),
            ["8 id is already used by a finding on line 7"]
        );
        // On the anchor scale, line 9's 100 is a finding.
        assert_eq!(whole.selections[1].returns[2].findings.len(), 1);
        let reading = reviews::Reading::new(Mode::Doc, &wants);
        for size in [1, 7, 64, 1 << 20] {
            for workers in [1, 2, 3] {
                for prechecked in [false, true] {
                    let mut inputs = Vec::new();
                    let index = || reviews::Index::default();
                    let streamed = if prechecked {
                        stream_by(
                            size,
                            workers,
                            (&path, Mark::default()),
                            &mut inputs,
                            |first, block| reviews::read_block_for("r", first, block, &reading),
                            |blocks| reviews::check_for("r", blocks.flatten(), &reading, index()),
                        )
                    } else {
                        stream_by(
                            size,
                            workers,
                            (&path, Mark::default()),
                            &mut inputs,
                            |first, block| reviews::read_block("r", first, block),
                            |blocks| reviews::check_for("r", blocks.flatten(), &reading, index()),
                        )
                    }
                    .unwrap()
                    .0;
                    let case =
                        format!("blocks of {size}, {workers} workers, prechecked {prechecked}");
                    assert_eq!(streamed, whole, "{case}");
                    assert_eq!(inputs[0].bytes, text.len());
                    assert_eq!(
                        inputs[0].sha256,
                        format!("{:x}", Sha256::digest(text.as_bytes()))
                    );
                }
            }
        }
        let missing = stream(&dir.join("none"), &mut Vec::new(), |_, _| (), |_| ());
        assert!(matches!(missing, Err(Error::Read { .. })), "{missing:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
