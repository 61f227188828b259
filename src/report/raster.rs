//! The PNG backend: plotters' bitmap backend with text laid out by us.
//!
//! plotters 0.3.7 places each glyph of an `ab_glyph` font at its advance position but drops the
//! glyph's left side bearing, so text in PNGs comes out unevenly spaced ("baselin e"). This
//! wrapper delegates every shape to [`BitMapBackend`] and draws text itself from the same
//! embedded font, with the bearing, keeping plotters' size, anchor, rotation and layout box so
//! that text sits where plotters planned it. Every glyph of a string rests on one baseline, on
//! a whole pixel.

use ab_glyph::{Font, FontRef, ScaleFont};
use plotters::prelude::BitMapBackend;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
};

pub struct Raster<'a> {
    inner: BitMapBackend<'a>,
    font: FontRef<'static>,
}

impl<'a> Raster<'a> {
    pub fn new(inner: BitMapBackend<'a>, font: FontRef<'static>) -> Self {
        Raster { inner, font }
    }
}

type Failure<'a> = DrawingErrorKind<<BitMapBackend<'a> as DrawingBackend>::ErrorType>;

impl<'a> DrawingBackend for Raster<'a> {
    type ErrorType = <BitMapBackend<'a> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }
    fn ensure_prepared(&mut self) -> Result<(), Failure<'a>> {
        self.inner.ensure_prepared()
    }
    fn present(&mut self) -> Result<(), Failure<'a>> {
        self.inner.present()
    }
    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Result<(), Failure<'a>> {
        self.inner.draw_pixel(point, color)
    }
    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), Failure<'a>> {
        self.inner.draw_line(from, to, style)
    }
    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), Failure<'a>> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }
    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), Failure<'a>> {
        self.inner.draw_path(path, style)
    }
    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), Failure<'a>> {
        self.inner.draw_circle(center, radius, style, fill)
    }
    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), Failure<'a>> {
        self.inner.fill_polygon(vert, style)
    }
    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), Failure<'a>> {
        self.inner.blit_bitmap(pos, size, src)
    }

    /// As plotters' default `draw_text`, with each glyph's outline placed at its pixel bounds.
    fn draw_text<TStyle: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        pos: BackendCoord,
    ) -> Result<(), Failure<'a>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let ((min_x, min_y), (max_x, max_y)) = style
            .layout_box(text)
            .map_err(|e| DrawingErrorKind::FontError(Box::new(e)))?;
        let (width, height) = (max_x - min_x, max_y - min_y);
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Right => -width,
            HPos::Center => -width / 2,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -height / 2,
            VPos::Bottom => -height,
        };
        let trans = style.transform();
        let (w, h) = self.get_size();
        let size = style.size() as f32;
        let font = self.font.as_scaled(size);
        // One baseline for the whole string, on a whole pixel. Glyph bounds are whole pixels
        // relative to it, so every glyph rests on the same row. (Rounding each glyph's own
        // `size / 2 + bounds` instead moved glyphs above and below the line in opposite
        // directions at odd sizes, raising the decimal point: "0·10".)
        let baseline = (size / 2.0).round() as i32;
        let mut pen = 0f32;
        let mut prev = None;
        let mut pixels = Vec::new();
        for c in text.chars() {
            let id = font.glyph_id(c);
            if let Some(p) = prev {
                pen += font.kern(p, id);
            }
            prev = Some(id);
            if let Some(outline) = font.outline_glyph(id.with_scale(size)) {
                let bounds = outline.px_bounds();
                let x0 = (pen + bounds.min.x).round() as i32;
                let y0 = baseline + bounds.min.y as i32;
                outline
                    .draw(|x, y, coverage| pixels.push((x0 + x as i32, y0 + y as i32, coverage)));
            }
            pen += font.h_advance(id);
        }
        for (x, y, coverage) in pixels {
            let (x, y) = trans.transform(x + dx - min_x, y + dy - min_y);
            let (x, y) = (pos.0 + x, pos.1 + y);
            if x >= 0 && x < w as i32 && y >= 0 && y < h as i32 {
                let c = BackendColor {
                    alpha: color.alpha * f64::from(coverage.clamp(0.0, 1.0)),
                    rgb: color.rgb,
                };
                self.inner.draw_pixel((x, y), c)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::plots::{register_font, FONT, FONT_BYTES};
    use plotters::style::{IntoFont, BLACK};

    const W: usize = 80;
    const H: usize = 40;

    /// `text` drawn black on white at `size`; returns the grey level of each pixel, row-major.
    fn render(text: &str, size: u32) -> Vec<u8> {
        register_font().unwrap();
        let mut rgb = vec![255u8; W * H * 3];
        {
            let bitmap = BitMapBackend::with_buffer(&mut rgb, (W as u32, H as u32));
            let font = FontRef::try_from_slice(FONT_BYTES).unwrap();
            let mut raster = Raster::new(bitmap, font);
            let style = (FONT, size).into_font().color(&BLACK);
            raster.draw_text(text, &style, (4, 4)).unwrap();
            raster.present().unwrap();
        }
        rgb.chunks(3).map(|p| p[0]).collect()
    }

    /// Each glyph's lowest and highest inked rows, glyphs told apart by blank columns.
    fn glyph_rows(grey: &[u8]) -> Vec<(usize, usize)> {
        let ink = |x: usize, y: usize| grey[y * W + x] < 160;
        let mut glyphs = Vec::new();
        let mut current: Option<(usize, usize)> = None;
        for x in 0..W {
            let rows: Vec<usize> = (0..H).filter(|&y| ink(x, y)).collect();
            match (rows.first(), rows.last(), current) {
                (Some(&top), Some(&bottom), Some((t, b))) => {
                    current = Some((t.min(top), b.max(bottom)))
                }
                (Some(&top), Some(&bottom), None) => current = Some((top, bottom)),
                (None, _, Some(done)) => {
                    glyphs.push(done);
                    current = None;
                }
                _ => {}
            }
        }
        glyphs.extend(current);
        glyphs
    }

    // Regression (issue 18): tick labels read "0·10": at the plots' odd label sizes the dot was
    // placed a pixel above the digits' baseline.
    #[test]
    fn the_decimal_point_sits_on_the_digits_baseline() {
        for size in [12, 13, 14, 15] {
            let glyphs = glyph_rows(&render("0.10", size));
            assert_eq!(glyphs.len(), 4, "size {size}: {glyphs:?}");
            let (dot_top, dot_bottom) = glyphs[1];
            let digits_bottom = [glyphs[0], glyphs[2], glyphs[3]].map(|g| g.1);
            assert!(
                digits_bottom.iter().all(|&b| b == dot_bottom),
                "size {size}: dot rows {dot_top}..={dot_bottom}, digits end at {digits_bottom:?}"
            );
            // And it is a dot on the line, not a mark in the middle of the digits' height.
            let digit_height = glyphs[0].1 - glyphs[0].0;
            assert!(
                dot_bottom - dot_top < digit_height / 3,
                "size {size}: {glyphs:?}"
            );
        }
    }
}
