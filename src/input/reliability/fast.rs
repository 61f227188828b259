//! The long CSV layout read the fast way, in parallel: for a file of plain rows (no quoted
//! cell anywhere) whose units are contiguous, the common export. The rows are split into one
//! chunk per core at unit boundaries; each chunk is grouped as [`super::Streaming`] groups it,
//! with rater ids and (nominal) label codes of its own, and the chunks are joined with those
//! renumbered into their order of first appearance in the whole file (a unit whose chunk met
//! its raters in another order has its values put back in the file's). The result is the
//! [`Table`] the general reader builds, value for value.
//!
//! It gives up (`None`) on anything it does not read exactly as the general reader does: a
//! quote, a blank first line, a row with another number of cells, an empty unit or rater, a
//! cell that is not UTF-8 or does not parse at the level, a unit that comes back, or a rater
//! who rates a unit twice. The general reader then reads the file and reports what it finds,
//! with its line and column.

use std::collections::HashSet;
use std::hash::BuildHasher;

use foldhash::fast::FixedState;

use super::{trim, CellParser, Key, Layout, Table};
use crate::stats::alpha::{Level, Units};

/// One chunk's units, with its own rater ids and label codes, each in order of first
/// appearance within the chunk.
struct Chunk<'a> {
    raters: Vec<&'a [u8]>,
    /// Nominal: the label of each code the chunk gave.
    labels: Vec<Key>,
    /// Unit u's values are `values[offsets[u]..offsets[u + 1]]`, in the order of the chunk's
    /// rater ids; `rater_of` holds the id beside each value, except in the first chunk, whose
    /// ids are the file's.
    offsets: Vec<usize>,
    values: Vec<f64>,
    rater_of: Vec<u32>,
    /// Hashes of the units' names, to find a unit that two chunks both hold.
    begun: HashSet<u64, FixedState>,
}

/// The columns a row is read from, and how many cells every row has.
#[derive(Clone, Copy)]
pub(super) struct Columns {
    pub unit: usize,
    pub rater: usize,
    pub value: usize,
    pub count: usize,
}

/// `bytes` (the whole file, its byte-order mark already removed) as the general reader would
/// group it, or `None` when the general reader must read it.
pub(super) fn read(bytes: &[u8], columns: Columns, level: Level) -> Option<Table> {
    let parts = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    read_in(bytes, columns, level, parts)
}

/// [`read`] in `parts` chunks (fewer when the file has fewer units).
fn read_in(bytes: &[u8], columns: Columns, level: Level, parts: usize) -> Option<Table> {
    if memchr::memchr(b'"', bytes).is_some() {
        return None;
    }
    let header_end = memchr::memchr(b'\n', bytes)?;
    // The first line is the header only when it holds something (the general reader skips
    // blank lines before it).
    if bytes[..header_end].trim_ascii().is_empty() {
        return None;
    }
    let data = &bytes[header_end + 1..];
    let bounds = split(data, parts, columns)?;
    let chunks: Vec<Option<Chunk>> = std::thread::scope(|scope| {
        let handles: Vec<_> = bounds
            .windows(2)
            .skip(1)
            .map(|w| {
                crate::threads::scoped(scope, "read ratings", move || {
                    chunk(&data[w[0]..w[1]], columns, level, false)
                })
            })
            .collect();
        let first = chunk(&data[bounds[0]..bounds[1]], columns, level, true);
        std::iter::once(first)
            .chain(handles.into_iter().map(|h| h.join().ok().flatten()))
            .collect()
    });
    join(chunks.into_iter().collect::<Option<Vec<_>>>()?, level)
}

/// Where each of `parts` chunks begins (and the last ends): at a line whose unit differs from
/// the line before it, so that no unit spans two chunks.
fn split(data: &[u8], parts: usize, columns: Columns) -> Option<Vec<usize>> {
    let mut bounds = vec![0];
    for k in 1..parts {
        let from = (data.len() * k / parts).max(*bounds.last()?);
        let Some(nl) = memchr::memchr(b'\n', &data[from..]) else {
            break;
        };
        let mut at = from + nl + 1;
        let unit = unit_of(data, at, columns)?;
        // On past the rest of that unit's lines.
        loop {
            if at >= data.len() {
                break;
            }
            if unit_of(data, at, columns)? != unit {
                break;
            }
            at += memchr::memchr(b'\n', &data[at..]).map_or(data.len() - at, |i| i + 1);
        }
        if at >= data.len() {
            break;
        }
        bounds.push(at);
    }
    bounds.push(data.len());
    Some(bounds)
}

/// The unit cell of the line that begins at `at`, trimmed; `None` for a line the fast reader
/// does not read.
fn unit_of(data: &[u8], at: usize, columns: Columns) -> Option<&[u8]> {
    let end = memchr::memchr(b'\n', &data[at..]).map_or(data.len(), |i| at + i);
    let line = &data[at..end];
    line.split(|&b| b == b',')
        .nth(columns.unit)
        .map(<[u8]>::trim_ascii)
}

/// A cell trimmed as the general reader trims it ([`trim`]), as bytes: most cells start and end
/// with a visible ASCII character and are kept whole; any other is trimmed as text (the chunk
/// is valid UTF-8 and cells split at ASCII bytes, so a cell is valid UTF-8 too).
fn trimmed(c: &[u8]) -> &[u8] {
    match c {
        [first, .., last] if first.is_ascii_graphic() && last.is_ascii_graphic() => c,
        [only] if only.is_ascii_graphic() => c,
        _ => std::str::from_utf8(c).map_or(c, |t| trim(t).as_bytes()),
    }
}

/// One chunk grouped into units, as [`super::Streaming`] groups a whole file.
fn chunk(data: &[u8], columns: Columns, level: Level, first: bool) -> Option<Chunk<'_>> {
    // Checked as UTF-8 once, rather than cell by cell.
    std::str::from_utf8(data).ok()?;
    let mut cells = CellParser::new(level);
    let mut rater_ids: std::collections::HashMap<&[u8], u32, FixedState> = Default::default();
    let mut out = Chunk {
        raters: Vec::new(),
        labels: Vec::new(),
        offsets: vec![0],
        values: Vec::with_capacity(data.len() / 6),
        rater_of: if first {
            Vec::new()
        } else {
            Vec::with_capacity(data.len() / 6)
        },
        // Room for a unit per 64 bytes, so that the set seldom grows.
        begun: HashSet::with_capacity_and_hasher(data.len() / 64, FixedState::default()),
    };
    let mut current: Option<&[u8]> = None;
    let mut ratings: Vec<(u32, f64)> = Vec::new();
    let close = |ratings: &mut Vec<(u32, f64)>, out: &mut Chunk| -> Option<()> {
        // In rater order; a stable sort keeps a rater's ratings in line order.
        ratings.sort_by_key(|r| r.0);
        if ratings.windows(2).any(|w| w[0].0 == w[1].0) {
            return None;
        }
        for &(rater, v) in ratings.iter().filter(|r| !r.1.is_nan()) {
            out.values.push(v);
            if !first {
                out.rater_of.push(rater);
            }
        }
        out.offsets.push(out.values.len());
        ratings.clear();
        Some(())
    };
    let wanted = [columns.unit, columns.rater, columns.value];
    let mut cell: [&[u8]; 3] = [&[]; 3];
    // The id of the rater on the row before: rows mostly name the raters in one order, so the
    // next rater is looked for there before the name table.
    let mut last: Option<u32> = None;
    let mut start = 0;
    while start < data.len() {
        // One pass over the row's bytes finds its end and its cells (rows are short: a loop
        // beats a search call per comma).
        let (mut count, mut from, mut at) = (0, start, start);
        while at < data.len() && data[at] != b'\n' {
            match data[at] {
                b',' => {
                    for (slot, &w) in cell.iter_mut().zip(&wanted) {
                        if w == count {
                            *slot = &data[from..at];
                        }
                    }
                    count += 1;
                    from = at + 1;
                }
                // A carriage return ends a row for the CSV reader wherever it stands; here
                // only before a newline (or at the end).
                b'\r' if at + 1 < data.len() && data[at + 1] != b'\n' => return None,
                _ => {}
            }
            at += 1;
        }
        let line = &data[start..at];
        start = at + 1;
        let line_end = if line.last() == Some(&b'\r') {
            at - 1
        } else {
            at
        };
        if line_end <= from && count == 0 {
            // An empty line (or a lone carriage return).
            continue;
        }
        let line = &line[..line.len() - (at - line_end)];
        for (slot, &w) in cell.iter_mut().zip(&wanted) {
            if w == count {
                *slot = &data[from..line_end];
            }
        }
        count += 1;
        if count != columns.count {
            return None;
        }
        let (unit, rater) = (trimmed(cell[0]), trimmed(cell[1]));
        if unit.is_empty() || rater.is_empty() {
            // A blank row (every cell empty) is skipped, as the general reader skips it.
            if line.split(|&b| b == b',').all(|c| trimmed(c).is_empty()) {
                continue;
            }
            return None;
        }
        let value = cells
            .parse(std::str::from_utf8(trimmed(cell[2])).ok()?)
            .ok()?;
        if current != Some(unit) {
            if current.is_some() {
                close(&mut ratings, &mut out)?;
            }
            if !out.begun.insert(out.begun.hasher().hash_one(unit)) {
                return None;
            }
            current = Some(unit);
        }
        let guess = last.map_or(0, |l| l + 1);
        let rater = if out.raters.get(guess as usize) == Some(&rater) {
            guess
        } else {
            let next = out.raters.len() as u32;
            *rater_ids.entry(rater).or_insert_with(|| {
                out.raters.push(rater);
                next
            })
        };
        last = Some(rater);
        ratings.push((rater, value.unwrap_or(f64::NAN)));
    }
    if current.is_some() {
        close(&mut ratings, &mut out)?;
    }
    let mut labels: Vec<(u32, Key)> = cells.labels.into_iter().map(|(k, v)| (v, k)).collect();
    labels.sort_unstable_by_key(|l| l.0);
    out.labels = labels.into_iter().map(|l| l.1).collect();
    Some(out)
}

/// The chunks as one table, raters and labels numbered in order of first appearance in the
/// whole file, and each unit's values in that rater order.
fn join(chunks: Vec<Chunk<'_>>, level: Level) -> Option<Table> {
    let mut chunks = chunks.into_iter();
    let first = chunks.next()?;
    // The first chunk's raters and labels are numbered as the file numbers them, and its units
    // are kept where they are; the others' follow, renumbered.
    let mut raters: std::collections::HashMap<&[u8], u32, FixedState> = first
        .raters
        .iter()
        .enumerate()
        .map(|(i, r)| (*r, i as u32))
        .collect();
    let mut labels: std::collections::HashMap<Key, u32, FixedState> = first
        .labels
        .into_iter()
        .enumerate()
        .map(|(i, k)| (k, i as u32))
        .collect();
    let mut begun = first.begun;
    let mut table = Units::from_parts(first.offsets, first.values)?;
    let mut unit: Vec<(u32, f64)> = Vec::new();
    let mut buf: Vec<f64> = Vec::new();
    for c in chunks {
        if c.begun.iter().any(|h| begun.contains(h)) {
            return None;
        }
        begun.extend(c.begun);
        let ids: Vec<u32> = c
            .raters
            .iter()
            .map(|r| {
                let next = raters.len() as u32;
                *raters.entry(r).or_insert(next)
            })
            .collect();
        let codes: Vec<f64> = c
            .labels
            .into_iter()
            .map(|k| {
                let next = labels.len() as u32;
                f64::from(*labels.entry(k).or_insert(next))
            })
            .collect();
        let recode = level == Level::Nominal;
        let value = |v: f64| if recode { codes[v as usize] } else { v };
        // The chunk's rater order is the file's when its ids rise with the file's.
        let in_order = ids.windows(2).all(|w| w[0] < w[1]);
        for w in c.offsets.windows(2) {
            let (from, to) = (w[0], w[1]);
            buf.clear();
            if in_order {
                buf.extend(c.values[from..to].iter().map(|&v| value(v)));
            } else {
                unit.clear();
                unit.extend((from..to).map(|i| (ids[c.rater_of[i] as usize], value(c.values[i]))));
                unit.sort_unstable_by_key(|r| r.0);
                buf.extend(unit.iter().map(|r| r.1));
            }
            table.push_unit(&buf).ok()?;
        }
    }
    if table.is_empty() {
        return None;
    }
    Some(Table {
        units: table,
        raters: raters.len(),
        layout: Layout::Long,
        warnings: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::{csv_with_header, read_long_csv, Route};
    use super::*;
    use crate::stats::rng::Rng;

    /// A long CSV drawn from `seed`: contiguous units mostly, each rated by a subset of the
    /// raters in the file's order (now and then another order, a unit that comes back, a
    /// repeated rating, a blank row, CRLF, an extra column, missing values and labels).
    fn file(seed: u64, nominal: bool) -> String {
        let mut rng = Rng::for_replicate(seed, 0);
        let mut pick = |n: usize| rng.below(n as u64) as usize;
        let extra = pick(3) == 0;
        let rater_first = pick(3) == 0;
        let eol = if pick(4) == 0 { "\r\n" } else { "\n" };
        let mut out = match (rater_first, extra) {
            (true, _) => format!("rater,unit,value{eol}"),
            (false, true) => format!("unit,rater,value,note{eol}"),
            (false, false) => format!("unit,rater,value{eol}"),
        };
        let raters: Vec<String> = (0..1 + pick(6)).map(|r| format!("r{r}")).collect();
        let values = ["0", "25", "50", "75", "100", "", "NA", " 50 ", "50.0"];
        let labels = ["yes", "no", "maybe", "1", "1.0"];
        let units = 1 + pick(40);
        let mut names: Vec<String> = (0..units).map(|u| format!("u{u}")).collect();
        if pick(8) == 0 {
            let again = names[pick(units)].clone();
            names.push(again);
        }
        for unit in names {
            let mut order: Vec<&String> = raters.iter().filter(|_| pick(5) != 0).collect();
            if pick(10) == 0 {
                order.reverse();
            }
            if pick(30) == 0 {
                if let Some(r) = order.first().copied() {
                    order.push(r);
                }
            }
            for r in order {
                let v = if nominal && pick(2) == 0 {
                    labels[pick(labels.len())]
                } else {
                    values[pick(values.len())]
                };
                let row = if rater_first {
                    format!("{r},{unit},{v}")
                } else if extra {
                    format!("{unit},{r},{v},x")
                } else {
                    format!("{unit},{r},{v}")
                };
                out += &row;
                if pick(200) == 0 {
                    // A carriage return inside a row: a row break to the CSV reader.
                    out += "\r9";
                }
                out += eol;
                if pick(50) == 0 {
                    out += if extra { ",,," } else { ",," };
                    out += eol;
                }
            }
        }
        out
    }

    fn columns(header: &[String]) -> Columns {
        let col = |c: &str| header.iter().position(|h| h == c).unwrap();
        Columns {
            unit: col("unit"),
            rater: col("rater"),
            value: col("value"),
            count: header.len(),
        }
    }

    #[test]
    fn the_fast_reader_reads_what_the_general_reader_reads_or_gives_way() {
        // Files read, given way on though the general reader reads them (a unit that comes
        // back, which it groups by sorting), and given way on as the general reader refuses.
        let (mut read, mut gave_way, mut refused) = (0, 0, 0);
        for seed in 0..600 {
            for level in [Level::Interval, Level::Nominal] {
                let text = file(seed, level == Level::Nominal);
                let (_, header) = csv_with_header("f", text.as_bytes(), "").unwrap();
                let general =
                    read_long_csv::<Table>("f", text.as_bytes(), &header, level, Route::General);
                for parts in 1..=4 {
                    match (
                        read_in(text.as_bytes(), columns(&header), level, parts),
                        &general,
                    ) {
                        (Some(fast), general) => {
                            assert_eq!(
                                Ok(&fast),
                                general.as_ref(),
                                "seed {seed}, {parts} parts:\n{text}"
                            );
                            read += 1;
                        }
                        (None, Ok(_)) => gave_way += 1,
                        (None, Err(_)) => refused += 1,
                    }
                }
            }
        }
        assert!(read > 10 * gave_way, "{read} read, {gave_way} given way");
        assert!(refused > 0);
    }

    #[test]
    fn chunks_split_between_units_and_renumber_raters_and_labels() {
        // Chunk 2 meets rater `b` and label `no` before chunk 1 does not: both get the next
        // number in the file's order.
        let text = "unit,rater,value\nu1,a,yes\nu1,c,yes\nu2,a,yes\nu2,c,yes\nu3,a,no\nu3,b,yes\nu3,c,no\n";
        let (_, header) = csv_with_header("f", text.as_bytes(), "").unwrap();
        let general = read_long_csv::<Table>(
            "f",
            text.as_bytes(),
            &header,
            Level::Nominal,
            Route::General,
        )
        .unwrap();
        let fast = read_in(text.as_bytes(), columns(&header), Level::Nominal, 3).unwrap();
        assert_eq!(fast, general);
        assert_eq!(fast.raters, 3);
        // Raters first met in another order in a later chunk: the unit's values are put in the
        // file's rater order (c before b), as the general reader puts them.
        let text = "unit,rater,value\nu1,a,1\nu1,c,2\nu2,a,1\nu3,b,3\nu3,c,4\n";
        let (_, header) = csv_with_header("f", text.as_bytes(), "").unwrap();
        let fast = read_in(text.as_bytes(), columns(&header), Level::Interval, 3).unwrap();
        assert_eq!(fast.units.unit(2), [4.0, 3.0]);
        let general = read_long_csv::<Table>(
            "f",
            text.as_bytes(),
            &header,
            Level::Interval,
            Route::General,
        )
        .unwrap();
        assert_eq!(fast, general);
    }
}
