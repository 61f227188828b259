//! The tables' Parquet files: polars' own Parquet encoder, with each column's encoding chosen
//! once per table instead of once per row group.
//!
//! polars' writer decides, for every column of every row group, whether a dictionary is worth
//! it: it estimates the column's distinct values (a HyperLogLog sketch with a fixed cost per
//! call) and, when they are few, builds the dictionary by hashing every value. At a million
//! findings, written 4,096 rows at a time, that was a tenth of the run's own work. Here the
//! first frame decides, by polars' own rule counted exactly (a dictionary unless more than
//! three quarters of more than 128 values are distinct): a column of many distinct values is
//! written plain from then on, with no estimate; a text column of few is given to the encoder
//! as a dictionary built from its arrays' views (a text of up to twelve bytes is its view, so most values are
//! matched without reading their text). Other columns keep polars' own choice. The file reads
//! back as the same table (tests below), with the schema polars writes.

use std::io::Write;

use polars::prelude::*;
use polars_arrow::array::{Array, DictionaryArray, PrimitiveArray, Utf8ViewArray};
use polars_arrow::datatypes::{ArrowDataType, IntegerType};
use polars_parquet::write::{
    array_to_columns, get_dtype_encoding, to_parquet_schema, CompressionOptions, Compressor,
    DynIter, DynStreamingIterator, Encoding, FallibleStreamingIterator, FileWriter, ParquetType,
    StatisticsOptions, Version, WriteOptions,
};

/// How a column is encoded, chosen on the table's first frame.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Choice {
    /// Its values as they are.
    Plain,
    /// A text column, as a dictionary built here.
    Dictionary,
    /// What polars' encoder chooses, row group by row group.
    Polars,
}

/// A table's Parquet file, a frame (one row group per chunk) at a time.
pub struct Parquet<W: Write> {
    writer: FileWriter<W>,
    fields: Vec<ParquetType>,
    choices: Vec<Option<Choice>>,
    options: WriteOptions,
    tables: Tables,
}

impl<W: Write> Parquet<W> {
    /// Starts a file of `schema`'s columns, its pages compressed with Snappy, the codec every
    /// Parquet reader has (polars' default, zstd, spent half the writer's time compressing at a
    /// million findings, for a file two thirds the size).
    pub fn new(out: W, schema: &Schema) -> PolarsResult<Self> {
        let arrow = schema.to_arrow(CompatLevel::newest());
        let parquet_schema = to_parquet_schema(&arrow)?;
        let fields = parquet_schema.fields().to_vec();
        let options = WriteOptions {
            statistics: StatisticsOptions::default(),
            compression: CompressionOptions::Snappy,
            version: Version::V1,
            data_page_size: None,
        };
        Ok(Parquet {
            choices: vec![None; fields.len()],
            writer: FileWriter::new_with_parquet_schema(out, arrow, parquet_schema, options),
            fields,
            options,
            tables: Tables::default(),
        })
    }

    /// Writes `df`'s rows, each chunk a row group.
    pub fn frame(&mut self, df: &DataFrame) -> PolarsResult<()> {
        for batch in df.iter_chunks(CompatLevel::newest(), false) {
            let rows = batch.len();
            if rows == 0 {
                continue;
            }
            let mut columns = Vec::with_capacity(self.fields.len());
            for ((array, field), choice) in batch
                .columns()
                .iter()
                .zip(&self.fields)
                .zip(&mut self.choices)
            {
                // The first frame's text dictionary, built to choose, is the one written.
                let (choice, built) = match *choice {
                    Some(chosen) => (chosen, None),
                    None => {
                        let (chosen, built) = choose(array.as_ref(), &mut self.tables)?;
                        (*choice.insert(chosen), built)
                    }
                };
                let text = array.as_any().downcast_ref::<Utf8ViewArray>();
                let pages = match (choice, text) {
                    (Choice::Dictionary, Some(text)) => array_to_columns(
                        match built {
                            Some(built) => built,
                            None => dictionary(text, &mut self.tables)?,
                        }
                        .boxed(),
                        field.clone(),
                        self.options,
                        &[Encoding::RleDictionary],
                    )?,
                    (Choice::Plain, _) => {
                        array_to_columns(array, field.clone(), self.options, &[Encoding::Plain])?
                    }
                    _ => array_to_columns(
                        array,
                        field.clone(),
                        self.options,
                        &get_dtype_encoding(array.dtype()),
                    )?,
                };
                let compression = self.options.compression;
                columns.extend(pages.into_iter().map(move |pages| {
                    let pages = pages.map(|page| {
                        page.map_err(|e| {
                            polars_parquet::parquet::error::ParquetError::FeatureNotSupported(
                                e.to_string(),
                            )
                        })
                    });
                    Ok(DynStreamingIterator::new(
                        Compressor::new_from_vec(pages, compression, vec![])
                            .map_err(PolarsError::from),
                    ))
                }));
            }
            self.writer
                .write(rows as u64, DynIter::new(columns.into_iter()))?;
        }
        Ok(())
    }

    /// Writes the file's footer (with the table's schema, as polars writes it).
    pub fn finish(mut self) -> PolarsResult<()> {
        self.writer.end(None).map(|_| ())
    }
}

/// polars' rule for a dictionary: not when more than three quarters of more than 128 values
/// are distinct.
fn worth_a_dictionary(distinct: usize, len: usize) -> bool {
    len <= 128 || distinct as f64 / len as f64 <= 0.75
}

/// A column's encoding, from its first frame: plain for a column of many distinct texts or
/// floats, a dictionary built here for a text column of few (given with the choice, so that
/// the frame's is not built twice); polars' own choice for the rest (whole numbers and flags,
/// which it decides without an estimate).
fn choose(
    array: &dyn Array,
    tables: &mut Tables,
) -> PolarsResult<(Choice, Option<DictionaryArray<u32>>)> {
    let len = array.len();
    if let Some(text) = array.as_any().downcast_ref::<Utf8ViewArray>() {
        let built = dictionary(text, tables)?;
        return Ok(if worth_a_dictionary(built.values().len(), len) {
            (Choice::Dictionary, Some(built))
        } else {
            (Choice::Plain, None)
        });
    }
    let floats: Option<Vec<u64>> =
        if let Some(a) = array.as_any().downcast_ref::<PrimitiveArray<f64>>() {
            Some(
                a.iter()
                    .map(|x| x.map_or(u64::MAX, |x| x.to_bits()))
                    .collect(),
            )
        } else {
            array
                .as_any()
                .downcast_ref::<PrimitiveArray<f32>>()
                .map(|a| {
                    a.iter()
                        .map(|x| x.map_or(u64::MAX, |x| u64::from(x.to_bits())))
                        .collect()
                })
        };
    let choice = match floats {
        Some(mut bits) => {
            bits.sort_unstable();
            bits.dedup();
            if worth_a_dictionary(bits.len(), len) {
                Choice::Polars
            } else {
                Choice::Plain
            }
        }
        None => Choice::Polars,
    };
    Ok((choice, None))
}

/// The tables [`dictionary`] finds a frame's values in, kept from frame to frame and emptied
/// for each column: made afresh for every text column of every 4,096-row frame, their room was
/// given back to the system and taken again (its pages zeroed once more) a few hundred times
/// a table. Each holds keys, a key standing for the row its value first appears in.
#[derive(Default)]
struct Tables {
    /// Values of up to twelve bytes, by their view (which holds them whole).
    short: hashbrown::HashTable<u32>,
    /// Longer values, by their text.
    long: hashbrown::HashTable<u32>,
}

/// `text` as a dictionary: each distinct value once, in order of first appearance, and each
/// row's key (a missing value stays missing). A value equal to the row before's view, or of up
/// to twelve bytes (held whole in its view), is matched by its view alone.
fn dictionary(text: &Utf8ViewArray, tables: &mut Tables) -> PolarsResult<DictionaryArray<u32>> {
    use std::hash::BuildHasher;
    let hasher = foldhash::fast::FixedState::default();
    let mut keys: Vec<u32> = Vec::with_capacity(text.len());
    // Each distinct value's key is its place here: the row it first appears in.
    let mut firsts: Vec<u32> = Vec::new();
    tables.short.clear();
    tables.long.clear();
    let mut last: Option<(u128, u32)> = None;
    let views = text.views();
    let view = |row: u32| views[row as usize].as_u128();
    for i in 0..text.len() {
        if !text.is_valid(i) {
            keys.push(0);
            continue;
        }
        let here = views[i].as_u128();
        if let Some((v, key)) = last {
            if v == here {
                keys.push(key);
                continue;
            }
        }
        let value = text.value(i);
        let short = value.len() <= 12;
        let (table, hash) = if short {
            (&mut tables.short, hasher.hash_one(here))
        } else {
            (&mut tables.long, hasher.hash_one(value))
        };
        let same = |&k: &u32| {
            let first = firsts[k as usize];
            if short {
                view(first) == here
            } else {
                text.value(first as usize) == value
            }
        };
        let rehash = |&k: &u32| {
            let first = firsts[k as usize];
            if short {
                hasher.hash_one(view(first))
            } else {
                hasher.hash_one(text.value(first as usize))
            }
        };
        let key = match table.find(hash, same) {
            Some(&key) => key,
            None => {
                let key = firsts.len() as u32;
                table.insert_unique(hash, key, rehash);
                firsts.push(i as u32);
                key
            }
        };
        last = Some((here, key));
        keys.push(key);
    }
    let values: Vec<&str> = firsts.iter().map(|&i| text.value(i as usize)).collect();
    let keys = PrimitiveArray::new(ArrowDataType::UInt32, keys.into(), text.validity().cloned());
    let values = Utf8ViewArray::from_slice_values(values);
    DictionaryArray::try_new(
        ArrowDataType::Dictionary(
            IntegerType::UInt32,
            Box::new(ArrowDataType::Utf8View),
            false,
        ),
        keys,
        values.boxed(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(values: &[Option<&str>]) -> Utf8ViewArray {
        Utf8ViewArray::from_slice(values)
    }

    #[test]
    fn a_dictionary_holds_each_text_once_in_order_of_first_appearance() {
        let long = "a text longer than twelve bytes";
        let copy = long.to_string();
        let d = dictionary(
            &texts(&[
                Some("b"),
                Some("a"),
                Some("b"),
                None,
                Some(long),
                Some("a"),
                Some(&copy),
                Some(""),
            ]),
            &mut Tables::default(),
        )
        .unwrap();
        let values = d.values().as_any().downcast_ref::<Utf8ViewArray>().unwrap();
        let values: Vec<&str> = values.values_iter().collect();
        assert_eq!(values, ["b", "a", long, ""]);
        let keys: Vec<Option<u32>> = d.keys().iter().map(|k| k.copied()).collect();
        assert_eq!(
            keys,
            [
                Some(0),
                Some(1),
                Some(0),
                None,
                Some(2),
                Some(1),
                Some(2),
                Some(3)
            ]
        );
    }

    // The tables are kept from frame to frame: a frame's dictionary is the one fresh tables
    // make, whatever frame they held before.
    #[test]
    fn a_frame_after_another_makes_the_dictionary_fresh_tables_make() {
        let long = |i: usize| format!("a text longer than twelve bytes, number {i}");
        let first: Vec<String> = (0..300).map(|i| long(i % 40)).collect();
        let second: Vec<String> = (0..300).map(|i| long(i % 7 + 35)).collect();
        let frame = |v: &[String]| {
            let mut values: Vec<Option<&str>> = v.iter().map(|s| Some(s.as_str())).collect();
            values.extend([Some("x"), Some("y"), Some("x")]);
            texts(&values)
        };
        let mut kept = Tables::default();
        dictionary(&frame(&first), &mut kept).unwrap();
        let reused = dictionary(&frame(&second), &mut kept).unwrap();
        let fresh = dictionary(&frame(&second), &mut Tables::default()).unwrap();
        assert_eq!(reused, fresh);
        assert_eq!(reused.values().len(), 9);
    }

    #[test]
    fn the_first_frame_chooses_by_polars_rule() {
        let many: Vec<String> = (0..200).map(|i| format!("finding {i}")).collect();
        let many: Vec<Option<&str>> = many.iter().map(|s| Some(s.as_str())).collect();
        assert_eq!(
            choose(&texts(&many), &mut Tables::default()).unwrap().0,
            Choice::Plain
        );
        // Three quarters distinct (149 texts and one repeated: 150 of 200) is still worth a
        // dictionary; one more is not.
        let mut some = many.clone();
        for v in some.iter_mut().skip(149) {
            *v = Some("repeated");
        }
        assert_eq!(
            choose(&texts(&some), &mut Tables::default()).unwrap().0,
            Choice::Dictionary
        );
        some[149] = Some("one more");
        assert_eq!(
            choose(&texts(&some), &mut Tables::default()).unwrap().0,
            Choice::Plain
        );
        // 128 values or fewer: a dictionary, however many are distinct.
        assert_eq!(
            choose(&texts(&many[..128]), &mut Tables::default())
                .unwrap()
                .0,
            Choice::Dictionary
        );
        let floats = PrimitiveArray::<f64>::from_vec((0..200).map(|i| i as f64 / 7.0).collect());
        assert_eq!(
            choose(&floats, &mut Tables::default()).unwrap().0,
            Choice::Plain
        );
        let anchors = PrimitiveArray::<f64>::from_vec((0..200).map(|i| (i % 5) as f64).collect());
        assert_eq!(
            choose(&anchors, &mut Tables::default()).unwrap().0,
            Choice::Polars
        );
        let whole = PrimitiveArray::<i64>::from_vec((0..200).collect());
        assert_eq!(
            choose(&whole, &mut Tables::default()).unwrap().0,
            Choice::Polars
        );
    }

    /// Frames of every kind of column (a text column never given, texts to quote, empty and
    /// not ASCII among them), the choices made on the first: the file reads back as the
    /// table, as polars' own writer's does, with the same schema.
    #[test]
    fn a_table_reads_back_as_written_whatever_each_column_was_chosen_as() {
        let n = 1_000;
        let title: Vec<String> = (0..n).map(|i| format!("finding number {i}")).collect();
        let df = df!(
            "title" => &title,
            "arm" => (0..n).map(|i| if i < 600 { "baseline" } else { "treatment" }).collect::<Vec<_>>(),
            "section" => (0..n).map(|i| format!("A section named at length {}", i % 7)).collect::<Vec<_>>(),
            "route" => (0..n).map(|i| (i % 4 != 0).then_some(["human", "auto"][i % 2])).collect::<Vec<_>>(),
            // A column the first frame finds few values in, and later frames many.
            "late" => (0..n).map(|i| if i < 300 { "same".to_string() } else { format!("v{i}") }).collect::<Vec<_>>(),
            "confidence" => (0..n).map(|i| i as f64 / 997.0).collect::<Vec<_>>(),
            "anchor" => (0..n).map(|i| [0.0, 25.0, 50.0, 75.0, 100.0][i % 5]).collect::<Vec<_>>(),
            "line" => (0..n).map(|i| (i % 3 != 0).then_some(i as u32)).collect::<Vec<_>>(),
            "promoted" => (0..n).map(|i| i % 2 == 0).collect::<Vec<_>>(),
            "never" => (0..n).map(|_| None).collect::<Vec<Option<&str>>>(),
            "words" => (0..n).map(|i| ["é", "", "日本語のとても長いテキストです", "a,\"b\"\n"][i % 4]).collect::<Vec<_>>(),
        )
        .unwrap();
        let mut out = Vec::new();
        let mut w = Parquet::new(&mut out, df.schema()).unwrap();
        for (offset, len) in [(0, 300), (300, 400), (700, 300)] {
            w.frame(&df.slice(offset, len)).unwrap();
        }
        w.finish().unwrap();
        assert_eq!(
            w_choices(&df.slice(0, 300)),
            [
                Choice::Plain,
                Choice::Dictionary,
                Choice::Dictionary,
                Choice::Dictionary,
                Choice::Dictionary,
                Choice::Plain,
                Choice::Polars,
                Choice::Polars,
                Choice::Polars,
                Choice::Dictionary,
                Choice::Dictionary
            ]
        );
        let back = ParquetReader::new(std::io::Cursor::new(&out))
            .finish()
            .unwrap();
        assert_eq!(back.schema(), df.schema());
        assert!(back.equals_missing(&df), "{back}");
        let mut theirs = Vec::new();
        ParquetWriter::new(&mut theirs)
            .finish(&mut df.clone())
            .unwrap();
        let theirs = ParquetReader::new(std::io::Cursor::new(theirs))
            .finish()
            .unwrap();
        assert!(back.equals_missing(&theirs));
    }

    fn w_choices(df: &DataFrame) -> Vec<Choice> {
        let batch = df.iter_chunks(CompatLevel::newest(), false).next().unwrap();
        batch
            .columns()
            .iter()
            .map(|a| choose(a.as_ref(), &mut Tables::default()).unwrap().0)
            .collect()
    }
}
