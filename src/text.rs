//! Strings from a corpus or a collected command (titles, ids, target and reviewer names,
//! reasons) are data, never markup or terminal control (docs/reference.md). This module owns how such a
//! string is made safe for each kind of output, so that no renderer invents its own:
//!
//! * [`markdown`]: `report.md`, `index.md` and the gate's `--summary` (posted as a pull-request
//!   comment). Line breaks are folded and markup is escaped, so a string cannot add a heading,
//!   a link, an HTML comment (`<!--` would hide what follows it) or a table row.
//! * [`markdown_code`]: the same inside a code span.
//! * [`html`]: `report.html` and `index.html`; [`xml_controls`]: SVG and JUnit. Control
//!   characters become U+FFFD, so the files stay well-formed.
//! * [`terminal`]: what is printed to a terminal: control characters (ESC, OSC, NUL, a bare
//!   carriage return) and bidirectional overrides become U+FFFD.
//!
//! Bare URLs are left as text: GitHub turns `https://…` into a link whose text is the URL
//! itself, which cannot disguise where it goes.

use std::borrow::Cow;

const REPLACEMENT: char = '\u{FFFD}';

/// A line break of any kind: folded to a space where a string must stay on one line.
fn is_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

/// A character that changes how text is shown rather than showing itself: C0 and C1 controls,
/// DEL, and the bidirectional embeddings, overrides and isolates ("Trojan source").
fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200E}' | '\u{200F}' | '\u{061C}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Maps each character through `f` (`None` keeps it), borrowing when nothing changes.
fn map_chars(s: &str, f: impl Fn(char) -> Option<char>) -> Cow<'_, str> {
    if s.chars().all(|c| f(c).is_none()) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(s.chars().map(|c| f(c).unwrap_or(c)).collect())
}

/// One line of visible text: every line break folded to a space (`\r\n` to one), every hidden
/// character replaced.
pub fn one_line(s: &str) -> Cow<'_, str> {
    let s: Cow<str> = if s.contains("\r\n") {
        Cow::Owned(s.replace("\r\n", " "))
    } else {
        Cow::Borrowed(s)
    };
    match map_chars(&s, |c| {
        if is_break(c) {
            Some(' ')
        } else if is_hidden(c) {
            Some(REPLACEMENT)
        } else {
            None
        }
    }) {
        Cow::Borrowed(_) => s,
        Cow::Owned(o) => Cow::Owned(o),
    }
}

/// A string laid into one line of the terminal (an id, a title, a name, a sentence that quotes
/// them): every line break, tab and hidden character shown escaped (`\n`, `\t`,
/// `\u{1b}`), so that a corpus string can neither break the line nor forge the next one.
pub fn inline(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| is_hidden(c) || is_break(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_hidden(c) || is_break(c) => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Text for a terminal: hidden characters replaced; line feeds and tabs kept (calibench's own
/// output is laid out with them). A carriage return, which would let a string overwrite the
/// line before it, is replaced too.
pub fn terminal(s: &str) -> Cow<'_, str> {
    map_chars(s, |c| {
        (is_hidden(c) && c != '\n' && c != '\t').then_some(REPLACEMENT)
    })
}

/// Text for XML that an XML writer has already escaped (`&<>"'`): the characters XML 1.0
/// forbids (C0 controls but tab, line feed and carriage return) and the ones it discourages
/// (DEL, C1) replaced.
pub fn xml_controls(s: &str) -> Cow<'_, str> {
    map_chars(s, |c| {
        (is_hidden(c) && !matches!(c, '\t' | '\n' | '\r')).then_some(REPLACEMENT)
    })
}

/// Text for HTML: `&<>"'` escaped and hidden characters replaced (line breaks kept: HTML reads
/// them as spaces).
pub fn html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c if is_hidden(c) => out.push(REPLACEMENT),
            c => out.push(c),
        }
    }
    out
}

/// Text for GitHub-flavoured Markdown, on one line and inert within a line: in a paragraph
/// after other text, a list item or a table cell.
///
/// Escaped with a backslash: `\`, `` ` ``, `*`, `|` (a table cell's edge), `]` before `(` or
/// `[` (what makes brackets a link or an image), `<` before what could open a tag, comment or
/// autolink (a letter, `/`, `!`, `?`), `_` at a word's edge (emphasis; `findings_raw` stays as
/// written) and `~` (strikethrough). A bracket pair alone links nothing without a reference
/// definition, and a definition must start a line, which a folded string cannot; so
/// `[0.57, 0.61]` stays as written. The result reads the same as the input when rendered.
pub fn markdown(s: &str) -> String {
    escape_markdown(s, Place::Inline)
}

/// [`markdown`] for text that starts a line, where `#`, `>`, `-`, `+`, `=`, `1.` or `[` (a
/// reference definition) at its start would open a block: those are escaped too.
pub fn markdown_line(s: &str) -> String {
    escape_markdown(s, Place::LineStart)
}

/// [`markdown`] for the text of a link calibench makes (`[name](its/report.md)`): every bracket
/// is escaped, so the text cannot close the link early or nest another.
pub fn markdown_link_text(s: &str) -> String {
    escape_markdown(s, Place::LinkText)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Inline,
    LineStart,
    LinkText,
}

fn escape_markdown(s: &str, place: Place) -> String {
    let s = one_line(s);
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len() + 8);
    let word = |i: Option<usize>| {
        i.and_then(|i| chars.get(i))
            .is_some_and(|c| c.is_alphanumeric())
    };
    let first = chars
        .iter()
        .position(|c| *c != ' ')
        .filter(|_| place == Place::LineStart);
    // `12.` or `3)` at the start would open an ordered list.
    let list_number_end = first.and_then(|f| {
        let digits = chars[f..].iter().take_while(|c| c.is_ascii_digit()).count();
        (digits > 0 && matches!(chars.get(f + digits), Some('.' | ')'))).then_some(f + digits)
    });
    for (i, &c) in chars.iter().enumerate() {
        let escape = match c {
            '\\' | '`' | '*' | '|' | '~' => true,
            ']' => place == Place::LinkText || matches!(chars.get(i + 1), Some('(' | '[')),
            '[' => place == Place::LinkText || Some(i) == first,
            '<' => chars
                .get(i + 1)
                .is_some_and(|n| n.is_ascii_alphabetic() || matches!(n, '/' | '!' | '?')),
            '_' => !(word(i.checked_sub(1)) && word(Some(i + 1))),
            '#' | '>' | '-' | '+' | '=' => Some(i) == first,
            _ => Some(i) == list_number_end,
        };
        if escape {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A Markdown code span holding `s` on one line: fenced with more backticks than any run in
/// `s`, padded when `s` starts or ends with one, and with `|` escaped (GitHub splits table
/// cells on a `|` even inside code).
pub fn markdown_code(s: &str) -> String {
    let s = one_line(s).replace('|', "\\|");
    let mut longest = 0;
    let mut run = 0;
    for c in s.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// `n` with its thousands separated: 1440 → "1,440".
pub fn thousands(n: impl Into<u64>) -> String {
    let n: u64 = n.into();
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `n` and the noun for it: "1 check", "3 checks".
pub fn count(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The first `shown` items joined by ", ", with ", …" when there are more.
pub fn first_few<T: std::fmt::Display>(
    items: impl ExactSizeIterator<Item = T>,
    shown: usize,
) -> String {
    let more = items.len() > shown;
    let mut out: Vec<String> = items.take(shown).map(|t| t.to_string()).collect();
    if more {
        out.push("…".into());
    }
    out.join(", ")
}

/// `s` as one argument a POSIX shell reads back as written: as it is when it holds only
/// letters, digits and `._/+-:@%,=`, else in single quotes (`'dir with spaces'`), so that a
/// command calibench prints can be pasted.
pub fn shell_arg(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._/+-:@%,=".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// A number as a person wrote it, kept short: Rust's shortest form between 10⁻⁴ and 10⁶, else
/// scientific (`1e308`, not 309 digits).
pub fn fmt_num(x: f64) -> String {
    if x == 0.0 || (1e-4..1e6).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// A p-value to 3 places, or `<0.001`.
pub fn fmt_p(p: f64) -> String {
    if p < 0.001 {
        "<0.001".into()
    } else {
        format!("{p:.3}")
    }
}

/// The name closest to `word`, when it is close enough to be a likely typo: at most a third
/// of the longer one's length in edits (insert, delete, substitute, swap two neighbours).
pub fn nearest<'a>(word: &str, names: &[&'a str]) -> Option<&'a str> {
    names
        .iter()
        .map(|n| (strsim::osa_distance(word, n), *n))
        .filter(|(d, n)| *d <= (n.len().max(word.len()) / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}

/// Every name a mistyped `word` may have meant, closest first: the names that extend it by a
/// `_` part (`distinct_values` → `distinct_values_max`, `distinct_values_mean`), then every
/// name at the nearest edit distance [`nearest`] accepts, so a tie names both.
pub fn close_names<'a>(word: &str, names: &[&'a str]) -> Vec<&'a str> {
    let mut out: Vec<&'a str> = names
        .iter()
        .filter(|n| {
            n.strip_prefix(word)
                .is_some_and(|rest| rest.starts_with('_'))
        })
        .copied()
        .collect();
    out.sort_unstable();
    if let Some(best) = nearest(word, names) {
        let d = strsim::osa_distance(word, best);
        let mut tied: Vec<&'a str> = names
            .iter()
            .filter(|n| strsim::osa_distance(word, n) == d && !out.contains(n))
            .copied()
            .collect();
        tied.sort_unstable();
        out.extend(tied);
    }
    out
}

/// "`a`", "`a` or `b`", "`a`, `b` or `c`": names offered as a did-you-mean.
pub fn or_list(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// Whether two different ids look like one id mistyped (docs/reference.md, "The input ledger"):
/// equal but for case or zero-padding (`Design-04`, `design-4`), or within two edits (one for an
/// id under five characters) unless they read as two members of one series: ids whose numbers
/// differ (`q7` and `q1`, `pr-1860` and `pr-1861`), or that differ in one single-character part
/// (`plan-a` and `plan-b`).
pub fn near_miss(a: &str, b: &str) -> bool {
    if a == b {
        return false;
    }
    if folded_id(a) == folded_id(b) {
        return true;
    }
    let (la, lb) = (a.to_lowercase(), b.to_lowercase());
    let edits = strsim::osa_distance(&la, &lb);
    let shortest = la.chars().count().min(lb.chars().count());
    if edits > 2 || (shortest < 5 && edits > 1) {
        return false;
    }
    let numbers = |s: &str| -> Vec<String> {
        parts(s)
            .into_iter()
            .filter(|p| p.chars().all(|c| c.is_ascii_digit()))
            .map(|p| p.trim_start_matches('0').to_string())
            .collect()
    };
    if numbers(&la) != numbers(&lb) {
        return false;
    }
    let (pa, pb) = (parts(&la), parts(&lb));
    if pa.len() == pb.len() {
        let differ: Vec<(&str, &str)> = pa
            .iter()
            .zip(&pb)
            .filter(|(x, y)| x != y)
            .map(|(x, y)| (x.as_str(), y.as_str()))
            .collect();
        if let [(x, y)] = differ[..] {
            if x.chars().count() == 1 && y.chars().count() == 1 {
                return false;
            }
        }
    }
    true
}

/// An id folded for comparison: lower case, separators `-`, `_`, `.` and spaces dropped, and
/// every number without its leading zeros. Two ids that fold alike are a near miss.
pub fn folded_id(s: &str) -> String {
    parts(&s.to_lowercase())
        .into_iter()
        .map(|p| {
            if p.chars().all(|c| c.is_ascii_digit()) {
                let t = p.trim_start_matches('0');
                if t.is_empty() {
                    "0".to_string()
                } else {
                    t.to_string()
                }
            } else {
                p
            }
        })
        .collect::<Vec<_>>()
        .join("\u{1}")
}

/// An id's parts: runs of digits and runs of other alphanumerics, split at anything else.
fn parts(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut last: Option<bool> = None;
    for c in s.chars() {
        if !c.is_alphanumeric() {
            last = None;
            continue;
        }
        let digit = c.is_ascii_digit();
        match (last, out.last_mut()) {
            (Some(d), Some(p)) if d == digit => p.push(c),
            _ => out.push(c.to_string()),
        }
        last = Some(digit);
    }
    out
}

/// Whether two byte strings are equal, in a `const` (where `==` on slices is not yet allowed):
/// what the catalogues' name look-ups that run as the code is compiled compare with.
pub const fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// For tests: `f` maps each case's input to its expected output.
#[cfg(test)]
#[track_caller]
pub(crate) fn assert_maps<O: PartialEq<&'static str> + std::fmt::Debug>(
    f: impl Fn(&'static str) -> O,
    cases: &[(&'static str, &'static str)],
) {
    for &(input, want) in cases {
        let got = f(input);
        assert!(got == want, "{input:?} gave {got:?}, not {want:?}");
    }
}

#[cfg(test)]
mod tests {
    // Regression (hostile-4/17 i): the SVG plots kept a right-to-left override from a target id,
    // which HTML and the terminal replace.
    #[test]
    fn xml_text_replaces_bidi_overrides_as_html_does() {
        let id = "plan\u{202E}lave";
        assert!(!xml_controls(id).contains('\u{202E}'));
        assert!(!html(id).contains('\u{202E}'));
        assert_eq!(xml_controls("tab\tkept"), "tab\tkept");
    }

    use super::*;

    #[test]
    fn near_misses_are_typos_not_members_of_a_series() {
        for (a, b) in [
            ("design-4", "design-04"),
            ("Design-04", "design-04"),
            ("design_04", "design-04"),
            ("desgin-04", "design-04"),
            ("desing-04", "design-04"),
            ("plan-alpha", "plan-alhpa"),
            ("feature-x1", "featur-x1"),
        ] {
            assert!(near_miss(a, b), "{a} {b}");
            assert!(near_miss(b, a), "{b} {a}");
        }
        for (a, b) in [
            ("design-04", "design-04"),
            ("q7", "q1"),
            ("q10", "q1"),
            ("pr-1860", "pr-1861"),
            ("plan-a", "plan-b"),
            ("doc-a1", "doc-b1"),
            ("abc", "xyz"),
            ("ab", "cd"),
            ("security-review", "coherence-review"),
        ] {
            assert!(!near_miss(a, b), "{a} {b}");
        }
    }

    #[test]
    fn shell_arguments_paste_back_as_written() {
        assert_maps(
            shell_arg,
            &[
                ("corpora/doc-review-ab", "corpora/doc-review-ab"),
                ("dir with spaces/ünïcødé ✓", "'dir with spaces/ünïcødé ✓'"),
                ("it's", "'it'\\''s'"),
                ("", "''"),
            ],
        );
    }

    #[test]
    fn nearest_finds_likely_typos_only() {
        assert_eq!(nearest("alpah", &["alpha", "level"]), Some("alpha"));
        assert_eq!(
            nearest("precison", &["precision", "dropped"]),
            Some("precision")
        );
        assert_eq!(nearest("zzz", &["alpha", "level"]), None);
        assert_eq!(nearest("", &[]), None);
        let names = [
            "distinct_values_max",
            "distinct_values_mean",
            "entropy_bits",
        ];
        assert_eq!(
            close_names("distinct_values", &names),
            ["distinct_values_max", "distinct_values_mean"]
        );
        assert_eq!(close_names("entropy_bit", &names), ["entropy_bits"]);
        assert_eq!(close_names("zzz", &names), Vec::<&str>::new());
        assert_eq!(
            close_names("recal", &["recall", "recap"]),
            ["recall", "recap"]
        );
        assert_eq!(or_list(&["a", "b", "c"]), "`a`, `b` or `c`");
        assert_eq!(or_list(&["a"]), "`a`");
    }

    #[test]
    fn markdown_folds_lines_and_escapes_what_would_be_markup() {
        assert_maps(
            markdown,
            &[
                (
                    "a\n\n# ✅ Verdict: trusted.\r\n| x |",
                    "a  # ✅ Verdict: trusted. \\| x \\|",
                ),
                // Within a line the characters that start a block are plain text.
                ("# h", "# h"),
                ("-0.25", "-0.25"),
                ("[x](javascript:alert(1))", "[x\\](javascript:alert(1))"),
                (
                    "![i](x) [a][b] [0.57, 0.61]",
                    "![i\\](x) [a\\][b] [0.57, 0.61]",
                ),
                ("<!-- hide", "\\<!-- hide"),
                ("<img onerror=x>", "\\<img onerror=x>"),
                ("p <0.001", "p <0.001"),
                ("findings_raw _em_", "findings_raw \\_em\\_"),
                ("a\u{1b}]8;;x\u{7}b\u{0}", "a\u{FFFD}]8;;x\u{FFFD}b\u{FFFD}"),
            ],
        );
        assert_maps(
            markdown_line,
            &[
                ("# h", "\\# h"),
                ("12. item", "12\\. item"),
                ("- item", "\\- item"),
                ("a - b # c", "a - b # c"),
                ("[a]: javascript:x", "\\[a]: javascript:x"),
            ],
        );
        assert_eq!(markdown_link_text("a]b[c"), "a\\]b\\[c");
    }

    #[test]
    fn code_spans_hold_any_backticks_and_pipes() {
        assert_maps(
            markdown_code,
            &[
                ("review.arms", "`review.arms`"),
                ("a`b", "``a`b``"),
                ("`x", "`` `x ``"),
                ("a|b\nc", "`a\\|b c`"),
            ],
        );
    }

    #[test]
    fn html_terminal_and_xml_replace_controls() {
        assert_eq!(
            html("<b>&\"'\u{1b}\n"),
            "&lt;b&gt;&amp;&quot;&#39;\u{FFFD}\n"
        );
        assert_eq!(terminal("ok\n\tfine"), Cow::Borrowed("ok\n\tfine"));
        assert_eq!(
            terminal("a\u{1b}[2Jb\rc\u{202E}d"),
            "a\u{FFFD}[2Jb\u{FFFD}c\u{FFFD}d"
        );
        assert_eq!(xml_controls("a\u{0}b\tc\u{85}"), "a\u{FFFD}b\tc\u{FFFD}");
    }
}
