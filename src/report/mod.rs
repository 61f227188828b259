//! Rendering the result model: each output format is its own module, and every one of them
//! renders from the same [`Metrics`].
//!
//! - [`tables`]: the run's CSV and Parquet tables (polars);
//! - [`document`]: what a report says, format-free;
//! - [`markdown`] and [`html`]: the document laid out as `report.md` and `report.html`;
//! - [`plots`]: the plots, as SVG and PNG;
//! - [`index`]: the page linking every report of a `calibench run`;
//! - [`terminal`]: the summary `calibench run` prints, from the same document.
//!
//! Pure: [`render`] returns the files' bytes; the commands write them.

mod csv;
pub mod document;
pub mod html;
pub mod index;
pub mod markdown;
mod parquet;
pub mod plots;
mod raster;
pub mod sweep;
pub mod tables;
pub mod terminal;

use crate::model::Metrics;
use crate::rundir::manifest::Manifest;
use document::Document;

/// A rendered report: its files (paths relative to the report directory) and what it says.
#[derive(Clone, Debug)]
pub struct Rendered {
    pub files: Vec<(String, Vec<u8>)>,
    pub document: Document,
}

/// Renders the report of one run: `report.md`, `report.html` and, unless `with_plots` is false,
/// `plots/<name>.svg` and `.png` for every plot the metrics support.
pub fn render(m: &Metrics, about: &Manifest, with_plots: bool) -> Result<Rendered, String> {
    let drawn = if with_plots {
        plots::render_all(&plots::specs(m))?
    } else {
        Vec::new()
    };
    let names: Vec<&'static str> = drawn.iter().map(|p| p.name).collect();
    let document = document::build(m, about, &names);
    let mut files = vec![
        (
            "report.md".to_string(),
            markdown::render(&document, &drawn).into_bytes(),
        ),
        (
            "report.html".to_string(),
            html::render(&document, &drawn).into_bytes(),
        ),
    ];
    for p in drawn {
        files.push((format!("plots/{}.svg", p.name), p.svg.into_bytes()));
        files.push((format!("plots/{}.png", p.name), p.png));
    }
    Ok(Rendered { files, document })
}
