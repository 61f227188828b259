//! The run's decision (docs/reference.md, "The decision"): Holm's adjustment over the decision's
//! family and over each table's other deltas, and each decision metric read from its table (a
//! catalogue's delta, the lift, the lift in human units, an imported scorer's delta).

use std::collections::BTreeMap;

use crate::replay::DeltaTable;
use crate::stats::holm::holm;
use crate::trust::Lift;

use crate::model::*;

/// Sets every reported delta's `p_adjusted` (docs/reference.md, "Adjusted p-values"): Holm over
/// `family` (the decision metrics, else the primary ones) as one family, and over each table's
/// other deltas as another. A name of the catalogue joins the family from its own table; any
/// other name is an imported scorer's; `lift` and `lift_human` (their p-values given in that
/// order) join it when named, and their adjusted p-values are returned in that order. A
/// withheld delta is no longer in its table and takes no part.
pub(super) fn adjust(
    family: &[String],
    review: Option<&mut ReviewSection>,
    queries: Option<&mut QuerySection>,
    scores: Option<&mut ScoresSection>,
    lifts: [Option<f64>; 2],
) -> (Option<f64>, Option<f64>) {
    let in_family = |table: DeltaTable, name: &str| {
        family.iter().any(|f| f == name) && crate::replay::compared_key(name).table == table
    };
    let mut tables: Vec<(&mut BTreeMap<String, Delta>, DeltaTable)> = Vec::new();
    tables.extend(review.map(|r| (&mut r.delta, DeltaTable::Review)));
    tables.extend(queries.map(|q| (&mut q.delta, DeltaTable::Queries)));
    tables.extend(scores.map(|s| (&mut s.delta, DeltaTable::Scores)));
    let mut families: Vec<Vec<&mut Delta>> = vec![Vec::new()];
    for (table, which) in tables {
        let mut others = Vec::new();
        for (name, delta) in table.iter_mut() {
            if in_family(which, name) {
                families[0].push(delta);
            } else {
                others.push(delta);
            }
        }
        families.push(others);
    }
    // The lifts' p-values, each where the experiment names it.
    let named: Vec<(usize, f64)> = crate::replay::LIFTS
        .iter()
        .map(|c| c.name)
        .zip(lifts)
        .enumerate()
        .filter(|(_, (name, _))| family.iter().any(|f| f == name))
        .filter_map(|(i, (_, p))| Some((i, p?)))
        .collect();
    let mut adjusted_lifts = [None, None];
    for (i, family) in families.into_iter().enumerate() {
        let mut ps: Vec<Option<f64>> = family.iter().map(|d| d.paired.p_value).collect();
        let own = ps.len();
        if i == 0 {
            ps.extend(named.iter().map(|&(_, p)| Some(p)));
        }
        let adjusted = holm(&ps);
        for (delta, p) in family.into_iter().zip(&adjusted) {
            delta.p_adjusted = *p;
        }
        if i == 0 {
            for (k, &(which, _)) in named.iter().enumerate() {
                adjusted_lifts[which] = adjusted[own + k];
            }
        }
    }
    (adjusted_lifts[0], adjusted_lifts[1])
}

/// The decision (docs/reference.md, "The decision") over `wanted`, from the run's deltas, with
/// each metric's noise floor when the experiment names one (`floors`, by metric name).
pub fn decide(
    m: &Metrics,
    wanted: &[crate::policy::Wanted],
    floors: &BTreeMap<String, crate::decision::Floor>,
) -> crate::decision::Decision {
    use crate::decision::{Row, Words};
    let rows: Vec<_> = wanted
        .iter()
        .map(|w| {
            let name = w.metric.as_str();
            // A catalogue's metric, a lift, or else an imported scorer.
            let c = crate::replay::decidable(name).unwrap_or(crate::replay::SCORER);
            let reading = match c.table {
                DeltaTable::LiftHuman => lift_human_reading(m),
                DeltaTable::Lift => lift_reading(m),
                table => delta_reading(m, table, name),
            };
            let words = Words {
                name: c.words_of(name),
                places: c.places,
                units: c.table.units(),
                difference: matches!(c.table, DeltaTable::Lift | DeltaTable::LiftHuman),
            };
            let relative = m
                .deltas(c.table)
                .and_then(|d| d.get(name))
                .and_then(|d| d.relative);
            Row {
                wanted: w.clone(),
                reading,
                words,
                floor: floors.get(name).cloned(),
                relative,
            }
        })
        .collect();
    crate::decision::decide(&rows)
}

/// A delta of one of the run's tables, as the decision reads it.
pub(super) fn delta_reading(
    m: &Metrics,
    table: DeltaTable,
    name: &str,
) -> crate::decision::Reading {
    use crate::decision::{Measured, Reading};
    if m.withheld(table).iter().any(|x| x == name) {
        return Reading::Withheld;
    }
    match m.deltas(table).and_then(|d| d.get(name)) {
        Some(d) if d.paired.pairs > 0 => Reading::Measured(Measured::of(&d.paired)),
        _ => Reading::Unmeasured,
    }
}

/// The lift (judge composite), as the decision reads it.
pub(super) fn lift_reading(m: &Metrics) -> crate::decision::Reading {
    use crate::decision::{Measured, Reading};
    match &m.lift {
        Some(l) if l.withheld => Reading::Withheld,
        Some(Lift {
            paired: Some(p), ..
        }) => Reading::Measured(Measured::of(p)),
        _ => Reading::Unmeasured,
    }
}

/// The lift in human units (PPI++), as the decision reads it: an estimate with its standard
/// error, tested by Student's t on its interval's degrees of freedom.
pub(super) fn lift_human_reading(m: &Metrics) -> crate::decision::Reading {
    use crate::decision::{Measured, Reading};
    let Some(l) = &m.lift_human else {
        return Reading::Unmeasured;
    };
    match (l.ppi.value, l.arms.baseline.value, l.arms.treatment.value) {
        (Some(delta), Some(baseline), Some(treatment)) if l.ppi.labelled > 0 => {
            use crate::stats::power::{t_upper, POWER};
            let se = l.ppi.standard_error();
            let df = l
                .ppi
                .df
                .unwrap_or(l.ppi.labelled.saturating_sub(1).max(1) as f64);
            // (t₀.₉₇₅ + t₀.₈) on its degrees of freedom, in standard errors.
            let reach = t_upper(0.025, df) + t_upper(1.0 - POWER, df);
            Reading::Measured(Measured {
                baseline,
                treatment,
                delta,
                ci: l.ppi.ci,
                p_value: l.p,
                mde: se.map(|se| se * reach),
                pairs: l.ppi.labelled,
                test: crate::stats::test::Test::PpiT,
                // The labelled pairs' spread as the t-test sees it.
                sd: se.map(|se| se * (l.ppi.labelled as f64).sqrt()),
                discordant: None,
                df: Some(df),
                min_pairs: crate::decision::MIN_LABELLED_PAIRS,
            })
        }
        _ => Reading::Unmeasured,
    }
}
