//! A `reviews.jsonl` line read straight from its text, for the lines writers usually write.
//!
//! [`raw::fast_line`] reads a line through serde into [`RawFinding`]s: a shared string and a
//! [`Slot`] per field, which the finding's rules then read and mostly drop (a severity becomes
//! `P1`, a class `manual`). Here a line is scanned once, each finding's fields are held as
//! views of the line's text ([`Direct`]), and the caller checks each finding as soon as it is
//! read; only the texts a checked finding keeps (its id, title, place, evidence) are copied.
//!
//! It is only a faster route to the same answer, and it is narrow on purpose: a line holding
//! anything it is not sure of (findings before the line's `arm`, a finding that is not an
//! object or has a key one slip from a field's name, a nested object, a negative or
//! out-of-range number, an escape it cannot decode, a repeated key, more than
//! [`raw::MAX_FINDINGS`] findings, text after the object) gives `None`, and the line is read by
//! [`raw::fast_line`] (and, if that refuses it, the general way) as before. A line it reads is
//! one `fast_line` reads with the same values: a test holds the two to that on every example
//! corpus and on lines altered in every way this list names.
//!
//! [`Slot`]: raw::Slot

use std::borrow::Cow;
use std::cell::OnceCell;
use std::sync::Arc;

use serde_json::Number;

use super::raw::{
    self, once, Envelope, Field, Items, RawReturn, SharedText, Status, Val, Written, FINDING_FIELDS,
};
use super::Text;
use crate::bytes::ByteSet;

/// A string of the line: borrowed when it has no escapes, shared once when a checked finding
/// keeps it (its id is both the finding's and the duplicate check's).
pub struct Piece<'a> {
    text: Cow<'a, str>,
    shared: OnceCell<Arc<str>>,
    id: OnceCell<super::raw::FindingId>,
}

impl SharedText for Piece<'_> {
    fn as_str(&self) -> &str {
        &self.text
    }
    fn shared(&self) -> Arc<str> {
        self.shared.get_or_init(|| Arc::from(&*self.text)).clone()
    }
    fn id(&self) -> super::raw::FindingId {
        self.id
            .get_or_init(|| super::raw::FindingId::from(&*self.text))
            .clone()
    }
}

/// A finding field's value as written.
enum Value<'a> {
    Null,
    Bool(bool),
    Number(Number),
    Str(Piece<'a>),
    /// An array of strings (any other array sends the line the general way).
    Texts(Vec<Piece<'a>>),
}

/// One finding object of the line, its fields by their place in [`FINDING_FIELDS`].
pub struct Direct<'a> {
    fields: [Option<Value<'a>>; FINDING_FIELDS.len()],
}

impl Direct<'_> {
    fn new() -> Self {
        Direct {
            fields: [const { None }; FINDING_FIELDS.len()],
        }
    }
}

impl<'a> Written for Direct<'a> {
    type Text = Piece<'a>;
    fn value(&self, field: Field) -> Option<Val<'_, Piece<'a>>> {
        Some(match self.fields[field.place()].as_ref()? {
            Value::Null => Val::Null,
            Value::Bool(b) => Val::Bool(*b),
            Value::Number(n) => Val::Number(n),
            Value::Str(s) => Val::Str(s),
            Value::Texts(t) => Val::Array(Items::Texts(t)),
        })
    }
    /// A key one slip from a field's name sends the line the general way: none is held here.
    fn near(&self, _: &str) -> Option<&str> {
        None
    }
}

/// The line `text` as a return, each finding turned into an `F` by `finding` (given the line's
/// arm) as soon as it is read, into `list` (an empty list, whose room is reused); `None` when
/// the line must be read by [`raw::fast_line`].
pub fn line<'a, F>(
    text: &'a str,
    list: Vec<F>,
    mut finding: impl FnMut(&str, &Direct<'a>) -> F,
) -> Option<RawReturn<F>> {
    let mut list = Some(list);
    let mut s = Scan { text, at: 0 };
    let mut r = Envelope::default();
    let mut others: Vec<&str> = Vec::new();
    s.object(|s, key| match key {
        "target" => once(&mut r.target, s.text()?),
        "arm" => once(&mut r.arm, s.text()?),
        "reviewer" => once(&mut r.reviewer, s.text()?),
        "run" => once(&mut r.run, s.or_null(Scan::whole)?),
        "status" => once(&mut r.status, s.or_null(Scan::status)?),
        "reason" => once(
            &mut r.reason,
            s.or_null(|s| Some(s.string()?.into_owned()))?,
        ),
        "findings" => {
            let arm = &r.arm.as_ref()?.0;
            let list = list.take()?;
            let read = s.or_null(|s| s.findings(list, |d| finding(arm, d)))?;
            once(&mut r.findings, read)
        }
        "residual_risks" => once(&mut r.residual, s.or_null(Scan::strings)?),
        "deferred_questions" => once(&mut r.deferred, s.or_null(Scan::strings)?),
        "testing_gaps" => once(&mut r.gaps, s.or_null(Scan::strings)?),
        "model" => once(&mut r.model, s.or_null(Scan::text)?),
        "usage" => once(&mut r.usage, s.or_null(Scan::usage)?),
        "elapsed_ms" => once(&mut r.elapsed_ms, s.or_null(Scan::amount)?),
        other => s.other(&mut others, other),
    })?;
    s.ws();
    if s.at != text.len() {
        return None;
    }
    r.finish()
}

/// How deep [`Scan::skip`] goes into arrays of an unknown key's value.
const DEPTH: usize = 16;

/// A place in the line's text.
struct Scan<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Scan<'a> {
    fn ws(&mut self) {
        let b = self.text.as_bytes();
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = b.get(self.at) {
            self.at += 1;
        }
    }

    /// The next byte after any whitespace, not taken.
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.text.as_bytes().get(self.at).copied()
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.at += 1)
    }

    /// Takes the word `w` (`true`, `false`, `null`) if it is next.
    fn word(&mut self, w: &str) -> bool {
        self.ws();
        let hit = self.text.as_bytes()[self.at..].starts_with(w.as_bytes());
        if hit {
            self.at += w.len();
        }
        hit
    }

    /// An object, each key and value read by `entry` (which reads the value).
    fn object(&mut self, mut entry: impl FnMut(&mut Self, &'a str) -> Option<()>) -> Option<()> {
        self.sequence(b'{', b'}', |s| {
            let key = s.key()?;
            s.eat(b':')?;
            entry(s, key)
        })
    }

    /// An array, each element read by `item`.
    fn array(&mut self, item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.sequence(b'[', b']', item)
    }

    /// `open`, items read by `item` and separated by commas, `close`.
    fn sequence(
        &mut self,
        open: u8,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Option<()>,
    ) -> Option<()> {
        self.eat(open)?;
        if self.peek()? == close {
            self.at += 1;
            return Some(());
        }
        loop {
            item(self)?;
            match self.peek()? {
                b',' => self.at += 1,
                c if c == close => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// `null` as `None`, else the value `read` reads.
    fn or_null<T>(&mut self, read: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        if self.word("null") {
            return Some(None);
        }
        read(self).map(Some)
    }

    /// A key: a string without escapes.
    fn key(&mut self) -> Option<&'a str> {
        match self.string()? {
            Cow::Borrowed(k) => Some(k),
            Cow::Owned(_) => None,
        }
    }

    /// A string, borrowed from the line unless it has escapes.
    fn string(&mut self) -> Option<Cow<'a, str>> {
        self.eat(b'"')?;
        let start = self.at;
        let end = PLAIN_END.find(self.text.as_bytes(), start)?;
        match self.text.as_bytes()[end] {
            b'"' => {
                self.at = end + 1;
                Some(Cow::Borrowed(&self.text[start..end]))
            }
            b'\\' => self.escaped(start, end),
            _ => None,
        }
    }

    /// The rest of a string with escapes, from `start`; the first escape is at `i`.
    fn escaped(&mut self, start: usize, mut i: usize) -> Option<Cow<'a, str>> {
        let b = self.text.as_bytes();
        let mut out = String::from(&self.text[start..i]);
        let mut plain = i;
        loop {
            match *b.get(i)? {
                b'"' => {
                    out.push_str(&self.text[plain..i]);
                    self.at = i + 1;
                    return Some(Cow::Owned(out));
                }
                b'\\' => {
                    out.push_str(&self.text[plain..i]);
                    let c = match *b.get(i + 1)? {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let (c, len) = self.unicode(i)?;
                            out.push(c);
                            i += len;
                            plain = i;
                            continue;
                        }
                        _ => return None,
                    };
                    out.push(c);
                    i += 2;
                    plain = i;
                }
                c if c < 0x20 => return None,
                _ => i += 1,
            }
        }
    }

    /// The character of the `\u` escape at `i` (a surrogate pair takes two), and its length.
    fn unicode(&self, i: usize) -> Option<(char, usize)> {
        let hex = |at: usize| -> Option<u32> {
            let digits = self.text.get(at..at + 4)?;
            if !digits.bytes().all(|d| d.is_ascii_hexdigit()) {
                return None;
            }
            u32::from_str_radix(digits, 16).ok()
        };
        let first = hex(i + 2)?;
        match first {
            0xD800..=0xDBFF => {
                if self.text.get(i + 6..i + 8)? != "\\u" {
                    return None;
                }
                let second = hex(i + 8)?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return None;
                }
                let c = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
                Some((char::from_u32(c)?, 12))
            }
            0xDC00..=0xDFFF => None,
            c => Some((char::from_u32(c)?, 6)),
        }
    }

    /// The text of a number, by JSON's grammar, and whether it is a whole one (no fraction,
    /// no exponent).
    fn number_text(&mut self) -> Option<(&'a str, bool)> {
        self.ws();
        let b = self.text.as_bytes();
        let start = self.at;
        let mut i = start;
        let digits = |i: &mut usize| {
            let from = *i;
            while b.get(*i).is_some_and(u8::is_ascii_digit) {
                *i += 1;
            }
            *i > from
        };
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        match b.get(i)? {
            b'0' => i += 1,
            b'1'..=b'9' => {
                digits(&mut i);
            }
            _ => return None,
        }
        let mut whole = true;
        if b.get(i) == Some(&b'.') {
            i += 1;
            whole = false;
            if !digits(&mut i) {
                return None;
            }
        }
        if let Some(b'e' | b'E') = b.get(i) {
            i += 1;
            whole = false;
            if let Some(b'+' | b'-') = b.get(i) {
                i += 1;
            }
            if !digits(&mut i) {
                return None;
            }
        }
        // A digit straight after a leading zero, or a letter after the number, is not JSON.
        if b.get(i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'.')
        {
            return None;
        }
        self.at = i;
        Some((&self.text[start..i], whole))
    }

    /// A number that is not negative, as serde_json reads it: a whole one that fits `u64` as
    /// that, any other as the nearest `f64` (read exactly, as calibench's serde_json is built
    /// to), which must be finite.
    fn number(&mut self) -> Option<Number> {
        let (text, whole) = self.number_text()?;
        if text.starts_with('-') {
            return None;
        }
        if whole {
            return text.parse::<u64>().ok().map(Number::from);
        }
        Number::from_f64(text.parse::<f64>().ok().filter(|x| x.is_finite())?)
    }

    /// A whole number ≥ 0 that fits `u64` (a run).
    fn whole(&mut self) -> Option<u64> {
        match self.number_text()? {
            (text, true) if !text.starts_with('-') => text.parse().ok(),
            _ => None,
        }
    }

    /// A number ≥ 0 (a cost, a duration); anything else declines the line, for the typed
    /// reader to refuse with its reason.
    fn amount(&mut self) -> Option<crate::corpus::usage::Amount> {
        let x = self.number()?.as_f64()?;
        Some(crate::corpus::usage::Amount(x))
    }

    /// A call's `usage` object, each part once; any other key or value declines the line.
    fn usage(&mut self) -> Option<crate::corpus::usage::Usage> {
        let mut u = crate::corpus::usage::Usage::default();
        let (mut input, mut output, mut cost) = (None, None, None);
        self.object(|s, key| match key {
            "input_tokens" => once(&mut input, s.or_null(Scan::whole)?),
            "output_tokens" => once(&mut output, s.or_null(Scan::whole)?),
            "cost_usd" => once(&mut cost, s.or_null(Scan::amount)?),
            _ => None,
        })?;
        (u.input_tokens, u.output_tokens, u.cost_usd) =
            (input.flatten(), output.flatten(), cost.flatten());
        Some(u)
    }

    /// A string that holds something (`Text`).
    fn text(&mut self) -> Option<Text> {
        let s = self.string()?;
        if s.trim().is_empty() {
            return None;
        }
        Some(Text(s.into_owned()))
    }

    fn status(&mut self) -> Option<Status> {
        match &*self.string()? {
            "ok" => Some(Status::Ok),
            "failed" => Some(Status::Failed),
            _ => None,
        }
    }

    /// An array of strings.
    fn strings(&mut self) -> Option<Vec<String>> {
        let mut out = Vec::new();
        self.array(|s| {
            out.push(s.string()?.into_owned());
            Some(())
        })?;
        Some(out)
    }

    /// The value of a key the line's type does not know: read and dropped, as the general
    /// reader drops it. The same key twice, or a value holding an object (whose own keys would
    /// need checking for repeats), sends the line the general way.
    fn other(&mut self, others: &mut Vec<&'a str>, key: &'a str) -> Option<()> {
        if others.contains(&key) {
            return None;
        }
        others.push(key);
        self.skip(0)
    }

    fn skip(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'[' if depth < DEPTH => self.array(|s| s.skip(depth + 1)),
            b't' | b'f' | b'n' => {
                (self.word("true") || self.word("false") || self.word("null")).then_some(())
            }
            b'-' | b'0'..=b'9' => {
                let (text, _) = self.number_text()?;
                // serde_json refuses a number too large for an f64.
                text.parse::<f64>().ok().filter(|x| x.is_finite()).map(drop)
            }
            _ => None,
        }
    }

    /// A return's findings, each read into one [`Direct`] and handed to `finding`, into `out`.
    fn findings<F>(
        &mut self,
        mut out: Vec<F>,
        mut finding: impl FnMut(&Direct<'a>) -> F,
    ) -> Option<Vec<F>> {
        out.clear();
        out.reserve(8);
        let mut others: Vec<&'a str> = Vec::new();
        self.array(|s| {
            if out.len() == raw::MAX_FINDINGS {
                return None;
            }
            let mut d = Direct::new();
            others.clear();
            s.object(|s, key| match raw::finding_field(key) {
                Some(i) if d.fields[i].is_none() => {
                    d.fields[i] = Some(s.value()?);
                    Some(())
                }
                Some(_) => None,
                None if raw::near_field(key).is_some() => None,
                None => s.other(&mut others, key),
            })?;
            out.push(finding(&d));
            Some(())
        })?;
        Some(out)
    }

    /// A finding field's value.
    fn value(&mut self) -> Option<Value<'a>> {
        Some(match self.peek()? {
            b'"' => Value::Str(piece(self.string()?)),
            b'[' => {
                let mut items = Vec::new();
                self.array(|s| {
                    items.push(piece(s.string()?));
                    Some(())
                })?;
                Value::Texts(items)
            }
            b't' if self.word("true") => Value::Bool(true),
            b'f' if self.word("false") => Value::Bool(false),
            b'n' if self.word("null") => Value::Null,
            b'0'..=b'9' => Value::Number(self.number()?),
            _ => return None,
        })
    }
}

/// Where the plain run of a string's bytes ends: at the first quote, backslash or control
/// character.
const PLAIN_END: ByteSet = ByteSet::new(b"\"\\", true);

fn piece(text: Cow<'_, str>) -> Piece<'_> {
    Piece {
        text,
        shared: OnceCell::new(),
        id: OnceCell::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // A finding's id is made once from its text, however often it is asked for: the finding
    // and the duplicate-id check hold one block, not two.
    #[test]
    fn an_id_is_made_once_and_shared() {
        let p = piece(Cow::Borrowed("baseline-143-1-product-lens-0"));
        let (a, b) = (p.id(), p.id());
        assert!(super::super::raw::FindingId::ptr_eq(&a, &b));
        assert_eq!(&*a, "baseline-143-1-product-lens-0");
    }

    // A string's plain run ends at the first quote, backslash or control byte, found wherever
    // it sits (how, sixteen bytes at a time or eight, `crate::bytes` tests).
    #[test]
    fn a_plain_run_ends_at_the_first_quote_backslash_or_control_byte() {
        for byte in 0..=255u8 {
            let mut b = vec![b'a'; 40];
            b[21] = byte;
            b[23] = b'"';
            let want = if byte == b'"' || byte == b'\\' || byte < 0x20 {
                21
            } else {
                23
            };
            assert_eq!(PLAIN_END.find(&b, 3), Some(want), "byte {byte}");
        }
    }

    #[test]
    fn finding_fields_are_found_by_shape_and_nothing_else_is() {
        for (i, f) in FINDING_FIELDS.iter().enumerate() {
            assert_eq!(raw::finding_field(f), Some(i));
        }
        for k in [
            "",
            "i",
            "ids",
            "Title",
            "titlf",
            "evidencee",
            "x",
            "requires_verificatioN",
        ] {
            assert_eq!(raw::finding_field(k), None, "{k}");
        }
    }
}
