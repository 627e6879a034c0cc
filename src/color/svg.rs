//! A picture of a resolution: the net as measured, the net as resolved (doubtful stickers
//! outlined), and every sticker on the a*b* plane with the six class means.
//!
//! Level: part of `color`; depends on `cube` and the resolver's result. Pure string building;
//! must not depend on anything above `color`. No printing.

use std::fmt::Write;

use palette::{FromColor, Lab, Srgb};

use super::resolve::Resolution;
use crate::cube::Face;

fn hex(lab: [f64; 3]) -> String {
    let l: Lab<palette::white_point::D65, f64> = Lab::new(lab[0], lab[1], lab[2]);
    let s = Srgb::from_color(l);
    let c = |v: f64| (v.clamp(0.0, 1.0) * 255.0).round() as u8;
    format!("#{:02x}{:02x}{:02x}", c(s.red), c(s.green), c(s.blue))
}

/// Net positions (column, row in faces) of U R F D L B.
const NET: [(usize, usize); 6] = [(1, 0), (2, 1), (1, 1), (1, 2), (0, 1), (3, 1)];

fn net(
    out: &mut String,
    x0: f64,
    y0: f64,
    n: usize,
    fill: &dyn Fn(usize) -> String,
    doubt: &[usize],
    title: &str,
) {
    let cell = 16.0;
    let _ = writeln!(
        out,
        r#"<text x="{x0}" y="{}" font-size="13">{title}</text>"#,
        y0 - 6.0
    );
    for (f, &(cx, cy)) in NET.iter().enumerate() {
        for k in 0..n * n {
            let i = f * n * n + k;
            let x = x0 + (cx * n + k % n) as f64 * cell;
            let y = y0 + (cy * n + k / n) as f64 * cell;
            let (stroke, w) = if doubt.contains(&i) {
                ("#ff00ff", 3)
            } else {
                ("#222", 1)
            };
            let _ = writeln!(
                out,
                r#"<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{}" stroke="{stroke}" stroke-width="{w}"><title>{}{}</title></rect>"#,
                fill(i),
                Face::ALL[f].letter(),
                k + 1
            );
        }
    }
}

/// The SVG document.
pub fn resolution_svg(res: &Resolution) -> String {
    let n = res.cube.size().n();
    let mut out = String::new();
    let netw = 4.0 * n as f64 * 16.0;
    let width = 2.0 * netw + 60.0 + 320.0;
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="360" font-family="sans-serif">"#
    );
    let _ = writeln!(
        out,
        r##"<rect width="100%" height="100%" fill="#fafafa"/>"##
    );
    let measured = |i: usize| hex(res.stickers[i].lab);
    net(&mut out, 10.0, 30.0, n, &measured, &[], "measured");
    let class_mean = |f: Face| {
        res.classes
            .iter()
            .find(|c| c.face == f)
            .map_or([50.0, 0.0, 0.0], |c| c.mean)
    };
    let resolved = |i: usize| hex(class_mean(res.stickers[i].face));
    net(
        &mut out,
        30.0 + netw,
        30.0,
        n,
        &resolved,
        &res.doubtful,
        "resolved (magenta: in doubt)",
    );
    // a*b* plane.
    let (px, py, half) = (2.0 * netw + 60.0 + 150.0, 180.0, 140.0);
    let range = 100.0;
    let to = |a: f64, b: f64| (px + a / range * half, py - b / range * half);
    let _ = writeln!(
        out,
        r##"<rect x="{}" y="{}" width="{}" height="{}" fill="#fff" stroke="#999"/><line x1="{}" y1="{py}" x2="{}" y2="{py}" stroke="#ccc"/><line x1="{px}" y1="{}" x2="{px}" y2="{}" stroke="#ccc"/><text x="{}" y="24" font-size="13">a*b* (class means: large)</text>"##,
        px - half,
        py - half,
        2.0 * half,
        2.0 * half,
        px - half,
        px + half,
        py - half,
        py + half,
        px - half
    );
    for (i, s) in res.stickers.iter().enumerate() {
        let (x, y) = to(s.lab[1].clamp(-range, range), s.lab[2].clamp(-range, range));
        let stroke = if res.doubtful.contains(&i) {
            "#ff00ff"
        } else {
            "#333"
        };
        let _ = writeln!(
            out,
            r#"<circle cx="{x:.1}" cy="{y:.1}" r="4" fill="{}" stroke="{stroke}"><title>sticker {i} → {}</title></circle>"#,
            hex(s.lab),
            s.face.letter()
        );
    }
    for c in &res.classes {
        let (x, y) = to(
            c.mean[1].clamp(-range, range),
            c.mean[2].clamp(-range, range),
        );
        let _ = writeln!(
            out,
            r##"<circle cx="{x:.1}" cy="{y:.1}" r="9" fill="{}" stroke="#000" stroke-width="2"/><text x="{:.1}" y="{:.1}" font-size="12">{}</text>"##,
            hex(c.mean),
            x + 11.0,
            y + 4.0,
            c.face.letter()
        );
    }
    out.push_str("</svg>\n");
    out
}
