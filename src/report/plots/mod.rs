//! The report's plots (docs/guides/reports.md), each baseline beside treatment, drawn with plotters as SVG and
//! PNG from the same [`Spec`].
//!
//! What a plot shows is decided by [`specs`], a pure function of the metrics; how it looks is
//! decided by `draw`, generic over the plotters backend so that the SVG and the PNG cannot
//! drift apart. PNG text is drawn with the DejaVu Sans font compiled into the binary
//! (`assets/fonts`), so it renders on a machine with no system fonts.

use std::sync::OnceLock;

use plotters::chart::MeshStyle;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::raster::Raster;
use crate::model::{Agreement, Metrics, PerArm};
use crate::policy::Scale;
use crate::replay::review_metrics::{
    by_target_of, ArmMetrics, TargetMetrics, ACTIONABLE, DEMOTED, DISTINCT_VALUES, DROPPED,
    EXTERNALIZED, FYI, MERGED, OVER_BUDGET, PRE_EXISTING, REJECTED, VALIDATION_SELECTED,
    VALIDATOR_FAILED, VALIDATOR_MISSING,
};
use crate::replay::ValueCount;

/// Pixel size of every plot.
mod panels;
mod specs;
use panels::draw;
pub use specs::{specs, MAX_SCORERS};

pub const WIDTH: u32 = 1000;
pub const HEIGHT: u32 = 460;

pub(crate) const FONT: &str = "sans-serif";
const BASELINE: RGBColor = RGBColor(76, 114, 176);
const TREATMENT: RGBColor = RGBColor(221, 132, 82);
const GRID: RGBColor = RGBColor(225, 225, 225);
const INK: RGBColor = RGBColor(40, 40, 40);
const RECOVERY: RGBColor = RGBColor(196, 40, 40);

/// One rendered plot.
#[derive(Clone, Debug, PartialEq)]
pub struct Plot {
    /// File stem under `plots/`: `review-values` gives `review-values.svg` and `.png`.
    pub name: &'static str,
    pub title: String,
    /// What the plot shows, for `alt` text and readers without images.
    pub alt: String,
    pub svg: String,
    pub png: Vec<u8>,
}

/// What one plot shows: the data, already taken from the metrics.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    pub name: &'static str,
    pub title: String,
    pub alt: String,
    pub kind: Kind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// Bars at each distinct confidence value, with optional threshold markers.
    Values(PerArm<ValuesPanel>),
    /// Stacked tier counts per target (mean over runs).
    Tiers(PerArm<TierPanel>),
    /// The validation pass's funnel, one bar per stage (docs/guides/ab-rubric-change.md).
    Funnel(PerArm<TierPanel>),
    /// Rates (or means on 0 to 1) with their intervals, baseline bar beside treatment bar per
    /// group; the second field names the y axis.
    Rates(Vec<RateGroup>, &'static str),
    /// Confidence against outcome per bin, with the bin counts.
    Reliability(PerArm<ReliabilityPanel>),
    /// α with its interval, one row per unit set.
    Alpha(AlphaRows),
    /// A sweep's grid points on two of its figures, each labelled, the recommended and the
    /// current setting marked.
    TradeOff(TradeOff),
    /// A square matrix of correlations in [−1, 1], one row and column per name, each cell
    /// coloured (blue −1, white 0, red +1) and written; `None` cells are grey.
    HeatMap(HeatMap),
    /// Estimates with their intervals, the axis spanning them and 0.
    Intervals(IntervalRows),
    /// Anytime-valid confidence sequences against units arrived, one panel per metric.
    Sequences(Vec<SequencePanel>),
}

/// One metric's confidence sequence: its name, each (look, lower, upper), the lines that
/// decide it (0 and a margin's), and the look at which the decision was reached.
#[derive(Clone, Debug, PartialEq)]
pub struct SequencePanel {
    pub name: String,
    pub bounds: Vec<(f64, f64, f64)>,
    pub lines: Vec<(f64, String)>,
    pub units: usize,
    pub stopped_at: Option<usize>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct HeatMap {
    pub names: Vec<String>,
    pub cells: Vec<Vec<Option<f64>>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TradeOff {
    pub x_desc: String,
    pub y_desc: String,
    /// (x, y, label) per grid point with both figures defined.
    pub points: Vec<(f64, f64, String)>,
    /// With `--frontier`: the points no other point beats on both figures.
    pub frontier: Vec<(f64, f64)>,
    pub recommended: Option<(f64, f64)>,
    pub current: Option<(f64, f64)>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ValuesPanel {
    pub label: String,
    /// (value on the panel's axis, count).
    pub bars: Vec<(f64, f64)>,
    pub x_max: f64,
    pub x_desc: String,
    pub y_desc: String,
    /// Vertical lines: band boundaries and gates.
    pub markers: Vec<Marker>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Marker {
    pub x: f64,
    pub label: String,
    pub gate: bool,
}

impl Marker {
    /// Where the band `name` starts: "weak 0.25".
    fn band(name: &str, x: f64) -> Marker {
        let label = format!("{name} {x:.2}");
        Marker {
            x,
            label,
            gate: false,
        }
    }

    /// A gate that fires below `x`: "stop < 0.20".
    fn gate(name: &str, x: f64) -> Marker {
        let label = format!("{name} < {x:.2}");
        Marker {
            x,
            label,
            gate: true,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct TierPanel {
    pub label: String,
    pub targets: Vec<String>,
    /// Per tier (name, per-target counts in `targets` order).
    pub tiers: Vec<(&'static str, Vec<f64>)>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RateGroup {
    pub name: String,
    pub baseline: (f64, Option<[f64; 2]>),
    pub treatment: (f64, Option<[f64; 2]>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct ReliabilityPanel {
    pub label: String,
    /// (mean confidence 0–1, observed outcome 0–1, count).
    pub points: Vec<(f64, f64, usize)>,
    pub y_desc: String,
}

/// Estimates with intervals on one axis: (label, colour: 0 ink / 1 baseline / 2 treatment,
/// value, interval), the axis's description, and dashed marks (x, label).
#[derive(Clone, Debug, PartialEq)]
pub struct IntervalRows {
    pub rows: Vec<(String, u8, f64, Option<[f64; 2]>)>,
    pub x_desc: String,
    pub marks: Vec<(f64, String)>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct AlphaRows {
    /// (label, arm: 0 judges / 1 baseline / 2 treatment, α, interval).
    pub rows: Vec<(String, u8, f64, Option<[f64; 2]>)>,
    /// The trust verdict's IRR floor, when there is one.
    pub floor: Option<f64>,
}

/// Colours that mean the same in the tiers plot and the funnel.
const ACTIONABLE_GREEN: RGBColor = RGBColor(44, 127, 68);
const LIGHT_BLUE: RGBColor = RGBColor(99, 150, 222);
const GREY: RGBColor = RGBColor(170, 170, 170);
const PURPLE: RGBColor = RGBColor(148, 103, 189);

/// The tier names, in stacking order, with their colours.
const TIERS: [(&str, RGBColor); 5] = [
    ("actionable", ACTIONABLE_GREEN),
    ("fyi", LIGHT_BLUE),
    ("dropped", GREY),
    ("demoted", PURPLE),
    ("pre-existing", RGBColor(140, 86, 75)),
];

/// The validation funnel's stages, top to bottom, with their colours.
const STAGES: [(&str, RGBColor); 7] = [
    ("actionable", ACTIONABLE_GREEN),
    ("selected", LIGHT_BLUE),
    ("over budget", GREY),
    ("rejected", RGBColor(196, 40, 40)),
    ("failed", RGBColor(221, 132, 82)),
    ("missing", PURPLE),
    ("externalized", RGBColor(25, 90, 45)),
];

/// Targets shown in the tiers plot; more would not be readable.
pub const MAX_TARGETS: usize = 20;

/// Draws every spec as SVG and PNG.
pub fn render_all(specs: &[Spec]) -> Result<Vec<Plot>, String> {
    specs.iter().map(render).collect()
}

/// Draws one spec as SVG and PNG.
pub fn render(spec: &Spec) -> Result<Plot, String> {
    register_font()?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        draw(&root, spec)?;
        root.present().map_err(err)?;
    }
    // plotters escapes `&<>"'` in SVG text but passes control characters from a target or
    // reviewer name through, which would make the file ill-formed XML.
    let svg = crate::text::xml_controls(&svg).into_owned();
    let mut rgb = vec![0u8; (WIDTH * HEIGHT * 3) as usize];
    {
        let font = ab_glyph::FontRef::try_from_slice(FONT_BYTES)
            .map_err(|_| "the embedded font could not be read".to_string())?;
        let bitmap = BitMapBackend::with_buffer(&mut rgb, (WIDTH, HEIGHT));
        let root = Raster::new(bitmap, font).into_drawing_area();
        draw(&root, spec)?;
        root.present().map_err(err)?;
    }
    Ok(Plot {
        name: spec.name,
        title: spec.title.clone(),
        alt: spec.alt.clone(),
        svg,
        png: encode_png(&rgb, WIDTH, HEIGHT)?,
    })
}

/// A chart builder with the report's margins and label areas, and the panel's caption.
fn frame<'a, 'b, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    caption: Option<&str>,
    y_label_area: u32,
) -> ChartBuilder<'a, 'b, DB> {
    let mut builder = ChartBuilder::on(area);
    builder
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(y_label_area);
    if let Some(c) = caption {
        builder.caption(c, ink_font(15, INK));
    }
    builder
}

/// The report's mesh: faint major lines only, the embedded font for labels.
fn styled<'m, 'a, 'b, X: Ranged, Y: Ranged, DB: DrawingBackend>(
    mesh: &'m mut MeshStyle<'a, 'b, X, Y, DB>,
) -> &'m mut MeshStyle<'a, 'b, X, Y, DB> {
    mesh.light_line_style(WHITE)
        .bold_line_style(GRID)
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 14))
}

/// A tick label: whole numbers without decimals, finer scales with as many as they need.
fn tick(v: f64, range: f64) -> String {
    if range >= 10.0 || (v - v.round()).abs() < 1e-9 && range > 2.0 {
        format!("{v:.0}")
    } else if range > 2.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// [`tick`], with a third decimal on an axis spanning less than 0.2 (a sweep's rates).
fn fine_tick(v: f64, range: f64) -> String {
    if range < 0.2 {
        format!("{v:.3}")
    } else {
        tick(v, range)
    }
}

/// A row of coloured keys centred in `area`.
fn legend_row<DB: DrawingBackend>(
    area: &Area<DB>,
    items: &[(String, RGBColor)],
) -> Result<(), String> {
    let font = ink_font(14, INK);
    let widths: Vec<i32> = items
        .iter()
        .map(|(label, _)| {
            area.estimate_text_size(label, &font)
                .map(|(w, _)| w as i32 + 40)
                .map_err(err)
        })
        .collect::<Result<_, _>>()?;
    let (w, h) = area.dim_in_pixel();
    let mut x = (w as i32 - widths.iter().sum::<i32>()) / 2;
    let y = h as i32 / 2;
    for ((label, colour), width) in items.iter().zip(widths) {
        area.draw(&Rectangle::new(
            [(x, y - 6), (x + 14, y + 6)],
            colour.filled(),
        ))
        .map_err(err)?;
        let centred = font.pos(Pos::new(HPos::Left, VPos::Center));
        write(area, label.clone(), (x + 20, y), centred)?;
        x += width;
    }
    Ok(())
}

/// A plot's drawing area, in pixels from its top left.
type Area<DB> = DrawingArea<DB, Shift>;

/// calibench's font at `size` in `colour`.
fn ink_font(size: u32, colour: RGBColor) -> TextStyle<'static> {
    (FONT, size).into_font().color(&colour)
}

/// Writes `s` at `at` (its top left, unless the style anchors it elsewhere).
fn write<DB: DrawingBackend>(
    area: &Area<DB>,
    s: impl Into<String>,
    at: (i32, i32),
    style: TextStyle<'_>,
) -> Result<(), String> {
    area.draw(&Text::new(s.into(), at, style)).map_err(err)
}

/// Labels of vertical marks, set in lanes above the plotting area so that no label sits on a
/// bar or a point and no two overlap: each label goes right of its line (left when it would
/// leave the panel) in the first lane where it clears the labels already there.
struct MarkLabels {
    /// (line's x, label, colour, whether it reads leftwards, lane).
    placed: Vec<(f64, String, RGBColor, bool, usize)>,
    lanes: usize,
}

const MARK_FONT: u32 = 14;
const MARK_LANE: u32 = MARK_FONT + 6;

impl MarkLabels {
    /// `marks` as (x, label, colour); `x_range` and the pixel span of the plotting area
    /// (`left`, `width` within `area`) place them before the chart is built.
    fn lay_out<DB: DrawingBackend>(
        area: &Area<DB>,
        marks: &[(f64, String, RGBColor)],
        x_range: (f64, f64),
        (left, width): (i32, i32),
    ) -> MarkLabels {
        let panel = area.dim_in_pixel().0 as i32;
        let font = ink_font(MARK_FONT, INK);
        let mut order: Vec<usize> = (0..marks.len()).collect();
        order.sort_by(|a, b| marks[*a].0.total_cmp(&marks[*b].0));
        let mut taken: Vec<Vec<(i32, i32)>> = Vec::new();
        let mut placed = Vec::new();
        for i in order {
            let (x, label, colour) = &marks[i];
            let px = left + ((x - x_range.0) / (x_range.1 - x_range.0) * width as f64) as i32;
            let w = area
                .estimate_text_size(label, &font)
                .map_or(label.chars().count() as i32 * 8, |(w, _)| w as i32);
            let leftwards = px + 4 + w > panel - 4;
            let span = if leftwards {
                (px - 4 - w, px)
            } else {
                (px, px + 4 + w)
            };
            let lane = taken
                .iter()
                .position(|l| l.iter().all(|&(a, b)| span.1 + 6 < a || b + 6 < span.0))
                .unwrap_or_else(|| {
                    taken.push(Vec::new());
                    taken.len() - 1
                });
            taken[lane].push(span);
            placed.push((*x, label.clone(), *colour, leftwards, lane));
        }
        MarkLabels {
            placed,
            lanes: taken.len(),
        }
    }

    /// The height to reserve above the plotting area.
    fn height(&self) -> u32 {
        self.lanes as u32 * MARK_LANE + 4
    }

    /// Writes the labels above `top`, the plotting area's top edge in `area`'s pixels; `px_of`
    /// gives a mark's x in `area`'s pixels once the chart is built.
    fn draw<DB: DrawingBackend>(
        &self,
        area: &Area<DB>,
        top: i32,
        px_of: impl Fn(f64) -> i32,
    ) -> Result<(), String> {
        for (x, label, colour, leftwards, lane) in &self.placed {
            let x = px_of(*x);
            let y = top - 4 - (*lane as i32) * MARK_LANE as i32;
            let (dx, h) = if *leftwards {
                (-4, HPos::Right)
            } else {
                (4, HPos::Left)
            };
            write(
                area,
                label.clone(),
                (x + dx, y),
                ink_font(MARK_FONT, *colour).pos(Pos::new(h, VPos::Bottom)),
            )?;
        }
        Ok(())
    }
}

fn err<E: std::fmt::Display>(e: E) -> String {
    format!("drawing a plot: {e}")
}

pub(crate) static FONT_BYTES: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

pub(crate) fn register_font() -> Result<(), String> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            plotters::style::register_font(FONT, FontStyle::Normal, FONT_BYTES)
                .map_err(|_| "the embedded font could not be read".to_string())
        })
        .clone()
}

/// RGB rows to PNG bytes.
fn encode_png(rgb: &[u8], width: u32, height: u32) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(err)?;
    writer.write_image_data(rgb).map_err(err)?;
    writer.finish().map_err(err)?;
    Ok(out)
}
