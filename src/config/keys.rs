//! The experiment's plain keys checked, each by the rule the reference states: its name, its
//! corpus folder, `[trust]`'s bounds, `primary`, `ignore_labels` and `[sequential] range`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Ctx, Trust};
use crate::error::InputError;
use crate::policy::{Arm, Wanted};

/// Each decision metric's range `[lo, hi]`, by name.
type Ranges = BTreeMap<String, [f64; 2]>;

/// The corpus folder an experiment at `path` names (`corpus`, else its own folder), relative to
/// the experiment's folder: `corpus = "."` names the experiment's own folder, and paths in
/// messages stay free of `/./`.
pub(super) fn corpus_folder(path: &Path, corpus: Option<&str>) -> PathBuf {
    let base = path.parent().unwrap_or(Path::new("."));
    let corpus: PathBuf = base
        .join(corpus.unwrap_or("."))
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect();
    // An experiment in the current folder naming its own folder: `.`, not the empty path.
    if corpus.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        corpus
    }
}

impl Ctx<'_> {
    /// The experiment's name: `name`, else its folder's. The name starts every run id.
    pub(super) fn name(&self, name: Option<String>, path: &Path) -> Result<String, InputError> {
        if let Some(name) = &name {
            // An empty name would make ids like `-20261127T…`, which a command line reads as
            // a flag.
            if name.trim().is_empty() {
                return Err(self
                    .error("name", "is empty")
                    .hint("name the experiment, or leave `name` out to use its folder's name"));
            }
            if name.starts_with('-') {
                return Err(self
                    .error(
                        "name",
                        format!(
                            "`{name}` starts with `-`: its run ids would read as a command-line flag"
                        ),
                    )
                    .hint("start the name with a letter or digit"));
            }
        }
        Ok(name.unwrap_or_else(|| {
            path.parent()
                .and_then(|p| p.file_name())
                .map_or("experiment".into(), |n| n.to_string_lossy().into_owned())
        }))
    }

    /// `[trust]`, each bound in its range.
    pub(super) fn trust(&self, trust: Trust) -> Result<Trust, InputError> {
        if !trust.irr_floor.is_finite() {
            return Err(self.error("trust.irr_floor", "must be a finite number"));
        }
        if !(trust.alt_test_epsilon > 0.0 && trust.alt_test_epsilon < 1.0) {
            return Err(self.error(
                "trust.alt_test_epsilon",
                format!(
                    "{} must be strictly between 0 and 1 (0.2 experts, 0.15 skilled annotators, 0.1 crowd workers)",
                    trust.alt_test_epsilon
                ),
            ));
        }
        if !(trust.spread_ceiling.is_finite() && trust.spread_ceiling >= 0.0) {
            return Err(self.error(
                "trust.spread_ceiling",
                format!("{} must be a finite number ≥ 0", trust.spread_ceiling),
            ));
        }
        if let Some((dim, w)) = trust
            .dimension_weights
            .iter()
            .find(|(_, w)| !(w.is_finite() && **w >= 0.0))
        {
            return Err(self.error(
                &format!("trust.dimension_weights.{dim}"),
                format!("{w} must be a finite number ≥ 0"),
            ));
        }
        Ok(trust)
    }

    /// `primary`: names of the catalogue, each once; with the line that names them.
    pub(super) fn primary(
        &self,
        primary: Vec<String>,
    ) -> Result<(Vec<String>, Option<u64>), InputError> {
        for (i, name) in primary.iter().enumerate() {
            let at = format!("primary.{i}");
            if crate::replay::compared_named(name).is_none() {
                let names: Vec<&str> = crate::replay::compared().iter().map(|c| c.name).collect();
                let near = crate::text::nearest(name, &names)
                    .map(|n| format!("; did you mean `{n}`?"))
                    .unwrap_or_default();
                return Err(self
                    .error(&at, format!("`{name}` is not a compared metric{near}"))
                    .hint(format!(
                        "primary metrics are names of review.delta or queries.delta: {}",
                        names.join(", ")
                    )));
            }
            if primary[..i].contains(name) {
                return Err(self.error(&at, format!("`{name}` is named twice")));
            }
        }
        let primary_line = (!primary.is_empty())
            .then(|| self.line_of("primary"))
            .flatten();
        Ok((primary, primary_line))
    }

    /// `ignore_labels`: recorded labels neither arm reads, each once.
    pub(super) fn ignore_labels(
        &self,
        ignore_labels: Vec<String>,
        [baseline, treatment]: [&Arm; 2],
    ) -> Result<Vec<String>, InputError> {
        for (i, label) in ignore_labels.iter().enumerate() {
            let at = format!("ignore_labels.{i}");
            if label.trim().is_empty() {
                return Err(self.error(&at, "is empty"));
            }
            if ignore_labels[..i].contains(label) {
                return Err(self.error(&at, format!("`{label}` is named twice")));
            }
            if let Some(arm) = [&baseline, &treatment]
                .into_iter()
                .find(|a| &a.source == label)
            {
                return Err(self
                    .error(
                        &at,
                        format!("`{label}` is the label arm `{}` reads", arm.name),
                    )
                    .hint("ignore_labels lists recorded labels neither arm reads; remove it, or change the arm's `source`"));
            }
        }
        Ok(ignore_labels)
    }

    /// `[sequential] range`: each a range of a decision metric; with the table's line.
    pub(super) fn sequential_range(
        &self,
        range: Option<BTreeMap<String, Vec<f64>>>,
        decision: &[Wanted],
    ) -> Result<(Ranges, Option<u64>), InputError> {
        let mut sequential_range = Ranges::new();
        for (name, written) in range.unwrap_or_default() {
            let at = format!("sequential.range.{name}");
            let shown: Vec<String> = written.iter().map(|x| x.to_string()).collect();
            let shown = format!("[{}]", shown.join(", "));
            // Exactly two numbers: a third would be dropped without a word.
            let &[lo, hi] = written.as_slice() else {
                return Err(self.error(
                    &at,
                    format!(
                        "{shown} has {}; a range is [LOW, HIGH]",
                        crate::text::count(written.len() as u64, "number", "numbers")
                    ),
                ));
            };
            if !(lo.is_finite() && hi.is_finite() && lo < hi) {
                return Err(self.error(
                    &at,
                    format!("{shown} is not a range: it needs two finite numbers, the lower first"),
                ));
            }
            if !(hi - lo).is_finite() {
                return Err(self.error(
                    &at,
                    format!("{shown} is too wide: its width is not a finite number"),
                ));
            }
            if !decision.iter().any(|w| w.metric == name) {
                return Err(self
                    .error(&at, format!("`{name}` is not a metric of `[decision]`"))
                    .hint("a range bounds a decision metric's per-unit values for `run --sequential`; name one of [decision]"));
            }
            sequential_range.insert(name, [lo, hi]);
        }
        let sequential_line = (!sequential_range.is_empty())
            .then(|| self.line_of("sequential"))
            .flatten();
        Ok((sequential_range, sequential_line))
    }
}
