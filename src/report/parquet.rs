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
                        let (chosen, built) = choose(array.as_ref())?;
                        (*choice.insert(chosen), built)
                    }
                };
                let text = array.as_any().downcast_ref::<Utf8ViewArray>();
                let pages = match (choice, text) {
                    (Choice::Dictionary, Some(text)) => array_to_columns(
                        match built {
                            Some(built) => built,
                            None => dictionary(text)?,
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
fn choose(array: &dyn Array) -> PolarsResult<(Choice, Option<DictionaryArray<u32>>)> {
    let len = array.len();
    if let Some(text) = array.as_any().downcast_ref::<Utf8ViewArray>() {
        let built = dictionary(text)?;
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

/// `text` as a dictionary: each distinct value once, in order of first appearance, and each
/// row's key (a missing value stays missing). A value equal to the row before's view, or of up
/// to twelve bytes (held whole in its view), is matched by its view alone.
fn dictionary(text: &Utf8ViewArray) -> PolarsResult<DictionaryArray<u32>> {
    let mut keys: Vec<u32> = Vec::with_capacity(text.len());
    let mut values: Vec<&str> = Vec::new();
    type Table<K> = std::collections::HashMap<K, u32, foldhash::fast::RandomState>;
    let (mut short, mut long): (Table<u128>, Table<&str>) = Default::default();
    let mut last: Option<(u128, u32)> = None;
    let views = text.views();
    for i in 0..text.len() {
        if !text.is_valid(i) {
            keys.push(0);
            continue;
        }
        let view = views[i].as_u128();
        if let Some((v, key)) = last {
            if v == view {
                keys.push(key);
                continue;
            }
        }
        let value = text.value(i);
        let next = values.len() as u32;
        let key = if value.len() <= 12 {
            *short.entry(view).or_insert(next)
        } else {
            *long.entry(value).or_insert(next)
        };
        if key == next {
            values.push(value);
        }
        last = Some((view, key));
        keys.push(key);
    }
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
        let d = dictionary(&texts(&[
            Some("b"),
            Some("a"),
            Some("b"),
            None,
            Some(long),
            Some("a"),
            Some(&copy),
            Some(""),
        ]))
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

    #[test]
    fn the_first_frame_chooses_by_polars_rule() {
        let many: Vec<String> = (0..200).map(|i| format!("finding {i}")).collect();
        let many: Vec<Option<&str>> = many.iter().map(|s| Some(s.as_str())).collect();
        assert_eq!(choose(&texts(&many)).unwrap().0, Choice::Plain);
        // Three quarters distinct (149 texts and one repeated: 150 of 200) is still worth a
        // dictionary; one more is not.
        let mut some = many.clone();
        for v in some.iter_mut().skip(149) {
            *v = Some("repeated");
        }
        assert_eq!(choose(&texts(&some)).unwrap().0, Choice::Dictionary);
        some[149] = Some("one more");
        assert_eq!(choose(&texts(&some)).unwrap().0, Choice::Plain);
        // 128 values or fewer: a dictionary, however many are distinct.
        assert_eq!(choose(&texts(&many[..128])).unwrap().0, Choice::Dictionary);
        let floats = PrimitiveArray::<f64>::from_vec((0..200).map(|i| i as f64 / 7.0).collect());
        assert_eq!(choose(&floats).unwrap().0, Choice::Plain);
        let anchors = PrimitiveArray::<f64>::from_vec((0..200).map(|i| (i % 5) as f64).collect());
        assert_eq!(choose(&anchors).unwrap().0, Choice::Polars);
        let whole = PrimitiveArray::<i64>::from_vec((0..200).collect());
        assert_eq!(choose(&whole).unwrap().0, Choice::Polars);
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
            .map(|a| choose(a.as_ref()).unwrap().0)
            .collect()
    }
}
