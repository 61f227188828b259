//! A per-target figure as a run holds it: two words, one for every metric of every (target,
//! run) of both arms.

use std::collections::BTreeMap;

use super::Kind;

/// One figure of one (target, run), held as its metric's [`Kind`] says.
///
/// Two words: a run holds one per metric for every (target, run) of both arms, and at a
/// million findings three words a figure were 56 MB of the tables' peak, 38 MB at two. So
/// every payload is one word: the histogram and a label's text are boxed, and the two
/// optional figures keep their absence inside that word ([`OptionalReal`], [`OptionalCount`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Figure {
    Count(usize),
    Real(f64),
    Optional(OptionalReal),
    ByValue(Box<BTreeMap<String, usize>>),
    OptionalCount(OptionalCount),
    /// The text boxed once more: a pointer to it is one word, where a `Box<str>` is two.
    Label(Option<Box<Box<str>>>),
    /// A precision-control figure of an experiment that does not replay the controls: not
    /// written anywhere, so such experiments' outputs are what they were before the controls.
    Absent,
}

/// A real number that may be absent, in one word: absence is one NaN that arithmetic never
/// makes (a signalling NaN with a payload of its own). A value with that very pattern is held
/// as the ordinary NaN, which every output writes as it would have written that one.
#[derive(Clone, Copy)]
pub struct OptionalReal(u64);

impl OptionalReal {
    const ABSENT: u64 = 0x7FF4_0000_0000_0A85;

    pub fn get(self) -> Option<f64> {
        (self.0 != Self::ABSENT).then(|| f64::from_bits(self.0))
    }
}

impl From<Option<f64>> for OptionalReal {
    fn from(x: Option<f64>) -> Self {
        OptionalReal(match x {
            None => Self::ABSENT,
            Some(x) if x.to_bits() == Self::ABSENT => f64::NAN.to_bits(),
            Some(x) => x.to_bits(),
        })
    }
}

impl PartialEq for OptionalReal {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl std::fmt::Debug for OptionalReal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

/// A count that may be unknown, in one word: the count plus one, where zero is unknown.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OptionalCount(Option<std::num::NonZeroUsize>);

impl OptionalCount {
    pub fn get(self) -> Option<usize> {
        self.0.map(|n| n.get() - 1)
    }
}

impl From<Option<usize>> for OptionalCount {
    fn from(n: Option<usize>) -> Self {
        OptionalCount(n.map(|n| {
            n.checked_add(1)
                .and_then(std::num::NonZeroUsize::new)
                .expect("a count below usize::MAX: each thing counted is held in memory")
        }))
    }
}

impl Figure {
    /// An optional real figure.
    pub fn optional(x: Option<f64>) -> Self {
        Figure::Optional(x.into())
    }

    /// A count that may be unknown.
    pub fn optional_count(n: Option<usize>) -> Self {
        Figure::OptionalCount(n.into())
    }

    /// A name, or nothing.
    pub fn label(text: Option<&str>) -> Self {
        Figure::Label(text.map(|t| Box::new(Box::from(t))))
    }

    /// A label's text, if the figure is a label that names one.
    pub fn text(&self) -> Option<&str> {
        match self {
            Figure::Label(l) => l.as_deref().map(|t| &**t),
            _ => None,
        }
    }

    /// The figure as a number; `None` for an absent optional figure or a histogram.
    pub fn number(&self) -> Option<f64> {
        match self {
            Figure::Count(n) => Some(*n as f64),
            Figure::Real(x) => Some(*x),
            Figure::Optional(x) => x.get(),
            Figure::OptionalCount(n) => n.get().map(|n| n as f64),
            Figure::ByValue(_) | Figure::Label(_) | Figure::Absent => None,
        }
    }

    pub(super) fn kind(&self) -> Option<Kind> {
        Some(match self {
            Figure::Count(_) => Kind::Count,
            Figure::Real(_) => Kind::Real,
            Figure::Optional(_) => Kind::Optional,
            Figure::ByValue(_) => Kind::ByValue,
            Figure::OptionalCount(_) => Kind::OptionalCount,
            Figure::Label(_) => Kind::Label,
            Figure::Absent => return None,
        })
    }
}
