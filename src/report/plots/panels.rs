//! How each kind of plot is drawn, generic over the plotters backend so that the SVG and the
//! PNG of one [`Spec`] cannot drift apart: the panels, bars, curves and intervals, with the
//! frame, ticks, legends and labels the report's module lends them.

use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::*;

pub(super) fn draw<DB: DrawingBackend>(root: &Area<DB>, spec: &Spec) -> Result<(), String> {
    root.fill(&WHITE).map_err(err)?;
    let body = root.titled(&spec.title, ink_font(22, INK)).map_err(err)?;
    match &spec.kind {
        Kind::Values(p) => {
            let y_max = p
                .baseline
                .bars
                .iter()
                .chain(&p.treatment.bars)
                .map(|b| b.1)
                .fold(1.0, f64::max);
            let halves = body.split_evenly((1, 2));
            values_panel(&halves[0], &p.baseline, BASELINE, y_max)?;
            values_panel(&halves[1], &p.treatment, TREATMENT, y_max)
        }
        Kind::Tiers(p) => {
            let total = |t: &TierPanel| {
                (0..t.targets.len())
                    .map(|i| t.tiers.iter().map(|(_, v)| v[i]).sum::<f64>())
                    .fold(1.0, f64::max)
            };
            let x_max = total(&p.baseline).max(total(&p.treatment));
            let present = |name: &str| {
                [&p.baseline, &p.treatment].iter().any(|panel| {
                    panel
                        .tiers
                        .iter()
                        .any(|(t, v)| *t == name && v.iter().any(|c| *c > 0.0))
                })
            };
            let items: Vec<(String, RGBColor)> = TIERS
                .iter()
                .filter(|(t, _)| present(t))
                .map(|(t, c)| (t.to_string(), *c))
                .collect();
            let (top, rest) = body.split_vertically(30);
            legend_row(&top, &items)?;
            let halves = rest.split_evenly((1, 2));
            let x = (&TIERS[..], "merged findings (mean over runs)");
            tier_panel_draw(&halves[0], &p.baseline, x_max, x)?;
            tier_panel_draw(&halves[1], &p.treatment, x_max, x)
        }
        Kind::Funnel(p) => {
            let most = |t: &TierPanel| {
                t.tiers
                    .iter()
                    .flat_map(|(_, v)| v.iter().copied())
                    .fold(1.0, f64::max)
            };
            let x_max = most(&p.baseline).max(most(&p.treatment));
            let halves = body.split_evenly((1, 2));
            let x = (
                &STAGES[..],
                "findings (summed over targets, mean over runs)",
            );
            tier_panel_draw(&halves[0], &p.baseline, x_max, x)?;
            tier_panel_draw(&halves[1], &p.treatment, x_max, x)
        }
        Kind::Rates(groups, y_desc) => {
            let (top, rest) = body.split_vertically(30);
            legend_row(
                &top,
                &[
                    ("baseline".into(), BASELINE),
                    ("treatment".into(), TREATMENT),
                ],
            )?;
            rates(&rest, groups, y_desc)
        }
        Kind::Reliability(p) => {
            let halves = body.split_evenly((1, 2));
            reliability_panel(&halves[0], &p.baseline, BASELINE)?;
            reliability_panel(&halves[1], &p.treatment, TREATMENT)
        }
        Kind::Alpha(rows) => alpha(&body, rows),
        Kind::TradeOff(t) => trade_off(&body, t),
        Kind::Sequences(panels) => {
            let areas = body.split_evenly((panels.len().max(1), 1));
            for (area, panel) in areas.iter().zip(panels) {
                sequence_panel(area, panel)?;
            }
            Ok(())
        }
        Kind::HeatMap(h) => heat_map(&body, h),
        Kind::Intervals(rows) => {
            let (lo, hi) = rows
                .rows
                .iter()
                .flat_map(|r| [r.2, r.3.map_or(r.2, |c| c[0]), r.3.map_or(r.2, |c| c[1])])
                .chain(rows.marks.iter().map(|m| m.0))
                .fold((0.0f64, 0.0f64), |(a, b), x| (a.min(x), b.max(x)));
            let pad = ((hi - lo) * 0.1).max(0.01);
            intervals(&body, rows, (lo - pad)..(hi + pad))
        }
    }
}

/// A correlation matrix as coloured cells with their values, names down the left and along the
/// top.
fn heat_map<DB: DrawingBackend>(area: &Area<DB>, h: &HeatMap) -> Result<(), String> {
    let k = h.names.len().max(1) as i32;
    let (w, ht) = area.dim_in_pixel();
    let (left, top) = (200, 40);
    let cell = ((w as i32 - left - 40) / k)
        .min((ht as i32 - top - 20) / k)
        .clamp(20, 120);
    let colour = |r: Option<f64>| match r {
        None => RGBColor(200, 200, 200),
        Some(r) => {
            let t = r.clamp(-1.0, 1.0);
            let (end, t) = if t >= 0.0 {
                ((198.0, 40.0, 40.0), t)
            } else {
                ((21.0, 101.0, 192.0), -t)
            };
            let mix = |e: f64| (255.0 + (e - 255.0) * t).round() as u8;
            RGBColor(mix(end.0), mix(end.1), mix(end.2))
        }
    };
    let short = |n: &str| -> String {
        if n.chars().count() > 22 {
            format!("{}…", n.chars().take(21).collect::<String>())
        } else {
            n.to_string()
        }
    };
    let font = ink_font(13, INK);
    // What the colours mean, right of the matrix.
    let key_x = left + k * cell + 40;
    for (row, (r, what)) in [
        (Some(1.0), "+1: the two judges err together"),
        (Some(0.0), "0: their errors are unrelated"),
        (Some(-1.0), "−1: they err in opposite directions"),
        (None, "—: not computable"),
    ]
    .into_iter()
    .enumerate()
    {
        let y = top + row as i32 * 28;
        area.draw(&Rectangle::new(
            [(key_x, y), (key_x + 18, y + 18)],
            colour(r).filled(),
        ))
        .map_err(err)?;
        area.draw(&Rectangle::new([(key_x, y), (key_x + 18, y + 18)], GRID))
            .map_err(err)?;
        write(area, what, (key_x + 28, y + 2), font.clone())?;
    }
    for (j, name) in h.names.iter().enumerate() {
        let x = left + j as i32 * cell + 4;
        write(area, short(name), (x, top - 20), font.clone())?;
    }
    for (i, row) in h.cells.iter().enumerate() {
        let y = top + i as i32 * cell;
        write(
            area,
            short(&h.names[i]),
            (10, y + cell / 2 - 7),
            font.clone(),
        )?;
        for (j, r) in row.iter().enumerate() {
            let x = left + j as i32 * cell;
            area.draw(&Rectangle::new(
                [(x, y), (x + cell - 2, y + cell - 2)],
                colour(*r).filled(),
            ))
            .map_err(err)?;
            let label = r.map_or("—".to_string(), |r| format!("{r:.2}"));
            let ink = if r.is_some_and(|r| r.abs() > 0.6) {
                WHITE
            } else {
                INK
            };
            write(
                area,
                label,
                (x + cell / 2 - 16, y + cell / 2 - 8),
                ink_font(14, ink),
            )?;
        }
    }
    Ok(())
}

/// A sweep's grid points: one dot per point with its values, the recommended point ringed in
/// green and the current setting in blue.
fn trade_off<DB: DrawingBackend>(area: &Area<DB>, t: &TradeOff) -> Result<(), String> {
    let marked = t.recommended.iter().chain(&t.current);
    let xs = || {
        t.points
            .iter()
            .map(|p| p.0)
            .chain(marked.clone().map(|p| p.0))
    };
    let ys = || {
        t.points
            .iter()
            .map(|p| p.1)
            .chain(marked.clone().map(|p| p.1))
    };
    // Points that share a figure (every rate at 1.00) still get an axis a reader can read.
    let span = |lo: f64, hi: f64| {
        let pad = ((hi - lo) * 0.08).max(0.02 * hi.abs().max(1.0));
        (lo - pad)..(hi + pad)
    };
    let fold = |it: &mut dyn Iterator<Item = f64>| {
        it.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        })
    };
    let (x0, x1) = fold(&mut xs());
    let (y0, y1) = fold(&mut ys());
    if !x0.is_finite() || !y0.is_finite() {
        return write(
            area,
            "no point has both figures",
            (40, 40),
            ink_font(16, INK),
        );
    }
    let (xr, mut yr) = (span(x0, x1), span(y0, y1));
    // A rate never exceeds 1: the axis stops just above it.
    if y1 <= 1.0 {
        yr.end = yr.end.min(1.0 + 0.002 * (yr.end - yr.start).max(1.0));
    }
    let (xw, yw) = (xr.end - xr.start, yr.end - yr.start);
    let mut chart = frame(area, None, 64)
        .build_cartesian_2d(xr, yr)
        .map_err(err)?;
    styled(&mut chart.configure_mesh())
        .x_desc(&t.x_desc)
        .y_desc(&t.y_desc)
        .x_label_formatter(&|v| fine_tick(*v, xw))
        .y_label_formatter(&|v| fine_tick(*v, yw))
        .draw()
        .map_err(err)?;
    chart
        .draw_series(
            t.points
                .iter()
                .map(|&(x, y, _)| Circle::new((x, y), 4, BASELINE.filled())),
        )
        .map_err(err)?;
    chart
        .draw_series(t.points.iter().map(|(x, y, label)| {
            EmptyElement::at((*x, *y)) + Text::new(label.clone(), (7, -18), ink_font(13, INK))
        }))
        .map_err(err)?;
    if !t.frontier.is_empty() {
        let gold = RGBColor(191, 128, 0);
        chart
            .draw_series(
                t.frontier
                    .iter()
                    .map(|&(x, y)| Circle::new((x, y), 6, gold.filled())),
            )
            .map_err(err)?
            .label("on the frontier (no point beats it on both)")
            .legend(move |(px, py)| Circle::new((px + 6, py), 5, gold.filled()));
    }
    // The current ring is the wider, so that a recommendation of the current setting shows both.
    for (at, colour, radius, what) in [
        (t.current, BASELINE, 13, "current setting"),
        (t.recommended, RGBColor(46, 125, 50), 8, "recommended"),
    ] {
        let Some((x, y)) = at else { continue };
        chart
            .draw_series(std::iter::once(Circle::new(
                (x, y),
                radius,
                colour.stroke_width(3),
            )))
            .map_err(err)?
            .label(what)
            .legend(move |(px, py)| Circle::new((px + 6, py), 6, colour.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.9))
        .border_style(GRID)
        .label_font((FONT, 13))
        .draw()
        .map_err(err)
}

/// One metric's sequence: the lower bound in the baseline's colour, the upper in the
/// treatment's, the band between them shaded, its deciding lines dashed and the stopping point
/// a vertical rule.
fn sequence_panel<DB: DrawingBackend>(area: &Area<DB>, p: &SequencePanel) -> Result<(), String> {
    let lo = p
        .bounds
        .iter()
        .map(|b| b.1)
        .chain(p.lines.iter().map(|l| l.0))
        .fold(f64::INFINITY, f64::min);
    let hi = p
        .bounds
        .iter()
        .map(|b| b.2)
        .chain(p.lines.iter().map(|l| l.0))
        .fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() || !hi.is_finite() {
        return write(
            area,
            format!("{}: no units", p.name),
            (40, 40),
            ink_font(16, INK),
        );
    }
    let pad = ((hi - lo) * 0.06).max(1e-3);
    let (yr, xr) = ((lo - pad)..(hi + pad), 0.0..(p.units.max(1) as f64));
    let yw = yr.end - yr.start;
    let mut chart = frame(area, Some(&p.name), 64)
        .build_cartesian_2d(xr, yr)
        .map_err(err)?;
    styled(&mut chart.configure_mesh())
        .x_desc("units arrived")
        .y_desc("treatment − baseline")
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&|v| {
            // No "-0" at the line that matters most.
            if v.abs() < yw * 1e-6 {
                "0".into()
            } else {
                fine_tick(*v, yw)
            }
        })
        .draw()
        .map_err(err)?;
    let band: Vec<(f64, f64)> = p
        .bounds
        .iter()
        .map(|b| (b.0, b.2))
        .chain(p.bounds.iter().rev().map(|b| (b.0, b.1)))
        .collect();
    chart
        .draw_series(std::iter::once(Polygon::new(band, TREATMENT.mix(0.12))))
        .map_err(err)?;
    for (which, colour) in [(1usize, BASELINE), (2, TREATMENT)] {
        let line: Vec<(f64, f64)> = p
            .bounds
            .iter()
            .map(|b| (b.0, if which == 1 { b.1 } else { b.2 }))
            .collect();
        chart
            .draw_series(std::iter::once(PathElement::new(
                line,
                colour.stroke_width(2),
            )))
            .map_err(err)?
            .label(if which == 1 {
                "lower bound"
            } else {
                "upper bound"
            })
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], colour.stroke_width(2))
            });
    }
    for (k, (y, label)) in p.lines.iter().enumerate() {
        // The first line's label above it, the next below, so that 0 and a close margin
        // do not write over each other.
        let offset = if k == 0 { (8, -18) } else { (8, 4) };
        chart
            .draw_series(std::iter::once(DashedPathElement::new(
                vec![(0.0, *y), (p.units as f64, *y)],
                6,
                4,
                RGBColor(90, 90, 90).stroke_width(1),
            )))
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((0.0, *y)) + Text::new(label.clone(), offset, ink_font(13, INK)),
            ))
            .map_err(err)?;
    }
    if let Some(at) = p.stopped_at {
        let x = at as f64;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(x, lo - pad), (x, hi + pad)],
                ACTIONABLE_GREEN.stroke_width(2),
            )))
            .map_err(err)?;
        // Its label on the side with room: left of a rule in the right half of the axis.
        let (dx, h) = if at as f64 > 0.5 * p.units as f64 {
            (-6, HPos::Right)
        } else {
            (6, HPos::Left)
        };
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((x, hi + pad))
                    + Text::new(
                        format!("decided after {at}"),
                        (dx, 4),
                        ink_font(13, ACTIONABLE_GREEN).pos(Pos::new(h, VPos::Top)),
                    ),
            ))
            .map_err(err)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.9))
        .border_style(GRID)
        .label_font((FONT, 13))
        .draw()
        .map_err(err)
}

fn values_panel<DB: DrawingBackend>(
    area: &Area<DB>,
    p: &ValuesPanel,
    colour: RGBColor,
    y_max: f64,
) -> Result<(), String> {
    let x_hi = p.x_max * 1.02;
    let marks: Vec<(f64, String, RGBColor)> = p
        .markers
        .iter()
        .map(|m| (m.x, m.label.clone(), if m.gate { RECOVERY } else { INK }))
        .collect();
    let (y_label_area, width) = (56, area.dim_in_pixel().0 as i32);
    let labels = MarkLabels::lay_out(
        area,
        &marks,
        (0.0, x_hi),
        (12 + y_label_area, width - 24 - y_label_area),
    );
    // The caption, then the labels' lanes, then the plot.
    let body = area.titled(&p.label, ink_font(15, INK)).map_err(err)?;
    let mut chart = frame(&body, None, y_label_area as u32)
        .margin_top(12 + labels.height())
        .build_cartesian_2d(0.0..x_hi, 0.0..y_max * 1.05)
        .map_err(err)?;
    styled(&mut chart.configure_mesh())
        .x_desc(&p.x_desc)
        .y_desc(&p.y_desc)
        .x_label_formatter(&|x| tick(*x, p.x_max))
        .y_label_formatter(&|y| tick(*y, y_max))
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 14))
        .draw()
        .map_err(err)?;
    let half = p.x_max * 0.006;
    chart
        .draw_series(
            p.bars
                .iter()
                .map(|&(x, n)| Rectangle::new([(x - half, 0.0), (x + half, n)], colour.filled())),
        )
        .map_err(err)?;
    for m in &p.markers {
        let style = if m.gate {
            RECOVERY.stroke_width(2)
        } else {
            RGBColor(90, 90, 90).stroke_width(1)
        };
        chart
            .draw_series(std::iter::once(DashedPathElement::new(
                vec![(m.x, 0.0), (m.x, y_max * 1.05)],
                6,
                4,
                style,
            )))
            .map_err(err)?;
    }
    let base = area.get_base_pixel();
    let top = chart.backend_coord(&(0.0, y_max * 1.05)).1 - base.1;
    labels.draw(area, top, |x| chart.backend_coord(&(x, 0.0)).0 - base.0)
}

/// Horizontal stacked bars, one row per target (or stage), coloured by `colours` and with
/// `x_desc` under the axis.
fn tier_panel_draw<DB: DrawingBackend>(
    area: &Area<DB>,
    p: &TierPanel,
    x_max: f64,
    (colours, x_desc): (&[(&str, RGBColor)], &str),
) -> Result<(), String> {
    let n = p.targets.len().max(1);
    let longest = p
        .targets
        .iter()
        .map(|t| t.chars().count())
        .max()
        .unwrap_or(4);
    let mut chart = frame(
        area,
        Some(&p.label),
        (longest as u32 * 7 + 12).clamp(40, 200),
    )
    .build_cartesian_2d(0.0..x_max * 1.05, (0..n - 1).into_segmented())
    .map_err(err)?;
    let names = p.targets.clone();
    styled(&mut chart.configure_mesh())
        .disable_y_mesh()
        .y_labels(n)
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => names.get(*i).cloned().unwrap_or_default(),
            _ => String::new(),
        })
        .x_desc(x_desc)
        .x_label_formatter(&|x| tick(*x, x_max))
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 14))
        .draw()
        .map_err(err)?;
    let mut start = vec![0.0; n];
    for (name, counts) in &p.tiers {
        let colour = colours
            .iter()
            .find(|(t, _)| t == name)
            .map_or(INK, |(_, c)| *c);
        let rects: Vec<_> = counts
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0.0)
            .map(|(i, c)| {
                let mut r = Rectangle::new(
                    [
                        (start[i], SegmentValue::Exact(i)),
                        (start[i] + c, SegmentValue::Exact(i + 1)),
                    ],
                    colour.filled(),
                );
                r.set_margin(3, 3, 0, 0);
                start[i] += c;
                r
            })
            .collect();
        chart.draw_series(rects).map_err(err)?;
    }
    Ok(())
}

fn rates<DB: DrawingBackend>(
    area: &Area<DB>,
    groups: &[RateGroup],
    y_desc: &str,
) -> Result<(), String> {
    // A lone group sits in the middle of three slots (a segmented axis needs two or more).
    let pad = usize::from(groups.len() <= 1);
    let n = groups.len() + 2 * pad;
    let mut chart = frame(area, None, 56)
        .build_cartesian_2d((0..n - 1).into_segmented(), 0.0..1.05)
        .map_err(err)?;
    let names: Vec<String> = groups.iter().map(|g| g.name.clone()).collect();
    styled(&mut chart.configure_mesh())
        .disable_x_mesh()
        .x_labels(n)
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => i
                .checked_sub(pad)
                .and_then(|i| names.get(i))
                .cloned()
                .unwrap_or_default(),
            _ => String::new(),
        })
        .y_desc(y_desc)
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 14))
        .draw()
        .map_err(err)?;
    // Each group's segment is split in two by pixel margins: baseline left, treatment right.
    let plot_width = chart.plotting_area().dim_in_pixel().0 as f64;
    let segment = plot_width / n as f64;
    let outer = (segment * 0.15) as u32;
    let inner = (segment * 0.5) as u32 + 2;
    for (arm, colour) in [(0, BASELINE), (1, TREATMENT)] {
        let (l, r) = if arm == 0 {
            (outer, inner)
        } else {
            (inner, outer)
        };
        chart
            .draw_series(groups.iter().enumerate().map(|(i, g)| {
                let i = i + pad;
                let v = if arm == 0 {
                    g.baseline.0
                } else {
                    g.treatment.0
                };
                let mut rect = Rectangle::new(
                    [
                        (SegmentValue::Exact(i), 0.0),
                        (SegmentValue::Exact(i + 1), v),
                    ],
                    colour.filled(),
                );
                rect.set_margin(0, 0, l, r);
                rect
            }))
            .map_err(err)?;
    }
    // Interval whiskers and values, drawn in pixels over each bar's centre.
    let centre = |i: usize, arm: usize| {
        let x0 = segment * i as f64;
        let (l, r) = if arm == 0 {
            (outer, inner)
        } else {
            (inner, outer)
        };
        x0 + (l as f64 + (segment - r as f64)) / 2.0
    };
    let plotting = chart.plotting_area();
    let (_, h) = plotting.dim_in_pixel();
    let y_px = |v: f64| (h as f64 * (1.0 - v / 1.05)) as i32;
    let whiskers = plotting.strip_coord_spec();
    for (i, g) in groups.iter().enumerate() {
        for (arm, (v, ci)) in [g.baseline, g.treatment].into_iter().enumerate() {
            let x = centre(i + pad, arm) as i32;
            if let Some([lo, hi]) = ci {
                let style = INK.stroke_width(2);
                whiskers
                    .draw(&PathElement::new(vec![(x, y_px(lo)), (x, y_px(hi))], style))
                    .map_err(err)?;
                for y in [y_px(lo), y_px(hi)] {
                    whiskers
                        .draw(&PathElement::new(vec![(x - 6, y), (x + 6, y)], style))
                        .map_err(err)?;
                }
            }
            let top = ci.map_or(v, |c| c[1]);
            write(
                &whiskers,
                format!("{:.0}%", 100.0 * v),
                (x + 8, y_px(top) - 16),
                ink_font(13, INK),
            )?;
        }
    }
    Ok(())
}

fn reliability_panel<DB: DrawingBackend>(
    area: &Area<DB>,
    p: &ReliabilityPanel,
    colour: RGBColor,
) -> Result<(), String> {
    let mut chart = frame(area, Some(&p.label), 56)
        .build_cartesian_2d(0.0..1.0, 0.0..1.05)
        .map_err(err)?;
    styled(&mut chart.configure_mesh())
        .x_desc("mean confidence in bin")
        .y_desc(&p.y_desc)
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 14))
        .draw()
        .map_err(err)?;
    chart
        .draw_series(std::iter::once(DashedPathElement::new(
            vec![(0.0, 0.0), (1.0, 1.0)],
            6,
            4,
            RGBColor(120, 120, 120).stroke_width(1),
        )))
        .map_err(err)?
        .label("perfect calibration")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], RGBColor(120, 120, 120)));
    // The gap between confidence and outcome, then the bin itself sized by its count.
    chart
        .draw_series(p.points.iter().map(|&(c, o, _)| {
            PathElement::new(vec![(c, c), (c, o)], colour.mix(0.6).stroke_width(2))
        }))
        .map_err(err)?;
    let most = p.points.iter().map(|p| p.2).max().unwrap_or(1).max(1) as f64;
    chart
        .draw_series(p.points.iter().map(|&(c, o, n)| {
            let r = 4.0 + 8.0 * (n as f64 / most).sqrt();
            Circle::new((c, o), r as i32, colour.filled())
        }))
        .map_err(err)?
        .label("bin (area grows with count)")
        .legend(move |(x, y)| Circle::new((x + 6, y), 5, colour.filled()));
    // Bin counts as a strip of bars along the bottom, each with its count.
    let strip = 0.12;
    chart
        .draw_series(p.points.iter().map(|&(c, _, n)| {
            let h = strip * n as f64 / most;
            Rectangle::new(
                [(c - 0.006, 0.0), (c + 0.006, h)],
                colour.mix(0.45).filled(),
            )
        }))
        .map_err(err)?
        .label("count per bin (bottom)")
        .legend(move |(x, y)| {
            Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.mix(0.45).filled())
        });
    chart
        .draw_series(p.points.iter().map(|&(c, _, n)| {
            let h = strip * n as f64 / most;
            EmptyElement::at((c, h))
                + Text::new(
                    n.to_string(),
                    (0, -4),
                    (FONT, 13)
                        .into_font()
                        .color(&INK)
                        .pos(Pos::new(HPos::Center, VPos::Bottom)),
                )
        }))
        .map_err(err)?;
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(GRID)
        .label_font((FONT, 13))
        .draw()
        .map_err(err)?;
    Ok(())
}

fn alpha<DB: DrawingBackend>(area: &Area<DB>, a: &AlphaRows) -> Result<(), String> {
    let lowest = a
        .rows
        .iter()
        .map(|r| r.3.map_or(r.2, |c| c[0]).min(r.2))
        .fold(0.0, f64::min);
    let x_min = if lowest < 0.0 { lowest - 0.05 } else { 0.0 };
    let mut marks = vec![
        (0.667, "0.667 tentative".to_string()),
        (0.8, "0.8 reliable".into()),
    ];
    if let Some(f) = a.floor {
        marks.push((f, format!("trust floor {f}")));
    }
    intervals(
        area,
        &IntervalRows {
            rows: a.rows.clone(),
            x_desc: "Krippendorff's α".into(),
            marks,
        },
        x_min..1.0,
    )
}

/// Estimates with their intervals, one row each, top-down, beside dashed marks.
fn intervals<DB: DrawingBackend>(
    area: &Area<DB>,
    a: &IntervalRows,
    x_range: std::ops::Range<f64>,
) -> Result<(), String> {
    let n = a.rows.len().max(1);
    let marks: Vec<(f64, String, RGBColor)> = a
        .marks
        .iter()
        .map(|(x, label)| (*x, label.clone(), RGBColor(90, 90, 90)))
        .collect();
    let width = area.dim_in_pixel().0 as i32;
    let labels = MarkLabels::lay_out(
        area,
        &marks,
        (x_range.start, x_range.end),
        (12 + 180, width - 24 - 180),
    );
    let mut chart = frame(area, None, 180)
        .margin_top(12 + labels.height())
        .build_cartesian_2d(x_range, (0..n - 1).into_segmented())
        .map_err(err)?;
    let names: Vec<String> = a.rows.iter().map(|r| r.0.clone()).collect();
    styled(&mut chart.configure_mesh())
        .disable_y_mesh()
        .y_labels(n)
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => names.get(n - 1 - *i).cloned().unwrap_or_default(),
            _ => String::new(),
        })
        .x_desc(&a.x_desc)
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 14))
        .draw()
        .map_err(err)?;
    for (x, _) in &a.marks {
        chart
            .draw_series(std::iter::once(DashedPathElement::new(
                vec![(*x, SegmentValue::Exact(0)), (*x, SegmentValue::Exact(n))],
                6,
                4,
                RGBColor(140, 140, 140).stroke_width(1),
            )))
            .map_err(err)?;
    }
    let base = area.get_base_pixel();
    let top = chart.backend_coord(&(0.0, SegmentValue::Exact(n))).1 - base.1;
    labels.draw(area, top, |x| {
        chart.backend_coord(&(x, SegmentValue::Exact(0))).0 - base.0
    })?;
    // Rows top-down in the given order: row k sits in segment n − 1 − k.
    for (k, (_, arm, value, ci)) in a.rows.iter().enumerate() {
        let colour = match arm {
            1 => BASELINE,
            2 => TREATMENT,
            _ => INK,
        };
        let seg = n - 1 - k;
        if let Some([lo, hi]) = ci {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![
                        (*lo, SegmentValue::CenterOf(seg)),
                        (*hi, SegmentValue::CenterOf(seg)),
                    ],
                    colour.stroke_width(3),
                )))
                .map_err(err)?;
        }
        chart
            .draw_series(std::iter::once(Circle::new(
                (*value, SegmentValue::CenterOf(seg)),
                7,
                colour.filled(),
            )))
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((*value, SegmentValue::CenterOf(seg)))
                    + Text::new(format!("{value:.3}"), (-14, -26), ink_font(13, INK)),
            ))
            .map_err(err)?;
    }
    Ok(())
}
