//! Seeded synthetic camera views of one cube face, for tests, benchmarks and the robot
//! simulator's camera: perspective, rounded stickers on black plastic, a cluttered
//! background of LEGO-like beams, a light gradient, a specular highlight, blur, sensor noise
//! and optionally a bar (a robot arm) over part of the face.
//!
//! ```
//! use cubot::scan::render::{render_face, RenderOptions};
//! let colors = [[200, 30, 30]; 9];
//! let img = render_face(&colors, 3, &RenderOptions::default(), 7);
//! assert_eq!((img.width, img.height), (480, 360));
//! ```
//!
//! Level: part of `scan` (pure Rust); depends on `scan::geom` and `scan::image`. Must not
//! depend on detection or anything above `scan`.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::geom::{cell_quad, map_quad, Homography, Pt, Quad};
use super::image::RgbImage;

/// What a render may contain.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderOptions {
    pub width: usize,
    pub height: usize,
    /// Face side as a share of the frame's short side: drawn from this range.
    pub face_scale: (f64, f64),
    /// Largest in-plane rotation, degrees.
    pub max_rotation: f64,
    /// Largest perspective distortion: each corner moves up to this share of the side.
    pub perspective: f64,
    /// Probability of a bar (robot arm) over part of an edge row.
    pub occlusion: f64,
    /// Background clutter (beams).
    pub clutter: bool,
    /// Specular highlight strength, 0..1 (drawn up to this).
    pub highlight: f64,
    /// Gaussian blur sigma in pixels: drawn from this range.
    pub blur: (f64, f64),
    /// Sensor noise sigma (8-bit units): drawn up to this.
    pub noise: f64,
    /// Sticker side as a share of the cell.
    pub sticker_fill: f64,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            width: 480,
            height: 360,
            face_scale: (0.45, 0.75),
            max_rotation: 12.0,
            perspective: 0.08,
            occlusion: 0.3,
            clutter: true,
            highlight: 0.6,
            blur: (0.4, 1.2),
            noise: 4.0,
            sticker_fill: 0.88,
        }
    }
}

/// A render with its ground truth.
#[derive(Clone, Debug)]
pub struct RenderedFace {
    pub image: RgbImage,
    /// Each sticker's true outline, image row-major.
    pub stickers: Vec<Quad>,
    /// Grid coordinates (`[0, n]^2`) to image pixels.
    pub grid: Homography,
    /// Whether a bar was drawn over the face.
    pub occluded: bool,
}

/// Renders face colours `colors` (`n*n`, image row-major) as a camera would see them.
pub fn render_face(colors: &[[u8; 3]], n: usize, opts: &RenderOptions, seed: u64) -> RgbImage {
    render_face_truth(colors, n, opts, seed).image
}

struct Beam {
    c: Pt,
    d: Pt,
    half_len: f64,
    half_w: f64,
    color: [f64; 3],
    holes: bool,
}

/// Renders and returns the ground truth too. Missing colours are drawn mid-grey.
///
/// Steps, each drawing from the seeded generator in turn: where the face sits in the frame,
/// the scene around it (wall, beams, arm, light), then the pixels (supersampled, shaded),
/// then the camera's blur and noise.
pub fn render_face_truth(
    colors: &[[u8; 3]],
    n: usize,
    opts: &RenderOptions,
    seed: u64,
) -> RenderedFace {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (w, h) = (opts.width.max(8), opts.height.max(8));
    let n = n.max(1);
    let place = Placement::draw(&mut rng, opts, w, h, n);
    let scene = Scene::draw(&mut rng, opts, colors, n, w, h, &place);
    let buf = scene.rasterise();
    let data = camera_finish(buf, w, h, &mut rng, opts);
    let stickers = (0..n * n)
        .map(|i| {
            map_quad(&place.grid, &cell_quad(i / n, i % n, scene.fill)).unwrap_or([[0.0; 2]; 4])
        })
        .collect();
    RenderedFace {
        image: RgbImage {
            width: w,
            height: h,
            data,
        },
        stickers,
        grid: place.grid,
        occluded: scene.bar.is_some(),
    }
}

/// Where the face sits in the frame: its size, centre, and the map from grid coordinates
/// (the face body, border included) to pixels (rotated, corners jittered for perspective).
struct Placement {
    side: f64,
    cx: f64,
    cy: f64,
    /// Plastic border around the stickers, in sticker units.
    border: f64,
    grid: Homography,
    inv: Homography,
}

impl Placement {
    fn draw(rng: &mut ChaCha8Rng, opts: &RenderOptions, w: usize, h: usize, n: usize) -> Placement {
        let short = w.min(h) as f64;
        let lo = opts.face_scale.0.min(opts.face_scale.1);
        let hi = opts.face_scale.0.max(opts.face_scale.1);
        let side = short * if hi > lo { rng.gen_range(lo..hi) } else { lo };
        let cx = w as f64 / 2.0 + rng.gen_range(-0.08..0.08) * w as f64;
        let cy = h as f64 / 2.0 + rng.gen_range(-0.08..0.08) * h as f64;
        let rot = if opts.max_rotation > 0.0 {
            rng.gen_range(-opts.max_rotation..opts.max_rotation)
                .to_radians()
        } else {
            0.0
        };
        let (cs, sn) = (rot.cos(), rot.sin());
        let border = 0.06;
        let body = n as f64 + 2.0 * border;
        let mut img_corners: Vec<Pt> = Vec::new();
        for (gx, gy) in [(-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5)] {
            let (x, y) = (gx * side, gy * side);
            let j = opts.perspective * side;
            let (jx, jy) = if j > 0.0 {
                (rng.gen_range(-j..j), rng.gen_range(-j..j))
            } else {
                (0.0, 0.0)
            };
            img_corners.push([cx + x * cs - y * sn + jx, cy + x * sn + y * cs + jy]);
        }
        let grid_corners: Vec<Pt> = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]
            .iter()
            .map(|&(a, b)| [-border + a * body, -border + b * body])
            .collect();
        let grid = Homography::fit(&grid_corners, &img_corners).unwrap_or_else(|| {
            Homography::affine(
                [cx - side / 2.0, cy - side / 2.0],
                [side / body, 0.0],
                [0.0, side / body],
            )
        });
        let inv = grid.inverse().unwrap_or_else(Homography::identity);
        Placement {
            side,
            cx,
            cy,
            border,
            grid,
            inv,
        }
    }
}

/// An occluding bar in grid coordinates: beyond a line near one edge of the face
/// (edge 0..4, depth, slope, colour).
type Bar = (u8, f64, f64, [f64; 3]);

/// Everything drawn: the face (stickers on plastic), a warm wall with a gradient, LEGO-like
/// beams, an optional bar over the face, a light gradient and a highlight.
struct Scene<'c> {
    colors: &'c [[u8; 3]],
    n: usize,
    w: usize,
    h: usize,
    short: f64,
    cx: f64,
    cy: f64,
    border: f64,
    inv: Homography,
    wall: [f64; 3],
    beams: Vec<Beam>,
    bar: Option<Bar>,
    light_dir: f64,
    light_amp: f64,
    /// Highlight centre, radius and strength.
    hl: Pt,
    hl_r: f64,
    hl_k: f64,
    fill: f64,
    radius: f64,
    plastic: [f64; 3],
}

impl<'c> Scene<'c> {
    fn draw(
        rng: &mut ChaCha8Rng,
        opts: &RenderOptions,
        colors: &'c [[u8; 3]],
        n: usize,
        w: usize,
        h: usize,
        place: &Placement,
    ) -> Scene<'c> {
        let short = w.min(h) as f64;
        let (cx, cy, side) = (place.cx, place.cy, place.side);
        // Background: a warm wall with a gradient, LEGO-like beams.
        let wall = [
            rng.gen_range(150.0..220.0),
            rng.gen_range(130.0..200.0),
            rng.gen_range(110.0..190.0),
        ];
        let mut beams = Vec::new();
        if opts.clutter {
            let palette = [
                [175.0, 175.0, 180.0],
                [225.0, 190.0, 40.0],
                [35.0, 35.0, 38.0],
                [120.0, 120.0, 125.0],
            ];
            for _ in 0..rng.gen_range(3..8) {
                let a: f64 = rng.gen_range(0.0..std::f64::consts::PI);
                beams.push(Beam {
                    c: [rng.gen_range(0.0..w as f64), rng.gen_range(0.0..h as f64)],
                    d: [a.cos(), a.sin()],
                    half_len: rng.gen_range(0.3..1.0) * short,
                    half_w: rng.gen_range(0.03..0.07) * short,
                    color: palette[rng.gen_range(0..palette.len())],
                    holes: rng.gen_bool(0.6),
                });
            }
        }
        let bar: Option<Bar> = (rng.gen::<f64>() < opts.occlusion).then(|| {
            let edge = rng.gen_range(0..4u8);
            let depth = rng.gen_range(0.15..0.7);
            let slope = rng.gen_range(-0.08..0.08);
            let color = if rng.gen_bool(0.5) {
                [60.0, 60.0, 64.0]
            } else {
                [170.0, 170.0, 175.0]
            };
            (edge, depth, slope, color)
        });
        let light_dir: f64 = rng.gen_range(0.0..std::f64::consts::TAU);
        let light_amp = rng.gen_range(0.05..0.25);
        let hl = [
            cx + rng.gen_range(-0.3..0.3) * side,
            cy + rng.gen_range(-0.3..0.3) * side,
        ];
        let hl_r = rng.gen_range(0.05..0.2) * side;
        let hl_k = rng.gen_range(0.0..opts.highlight.max(1e-9));
        Scene {
            colors,
            n,
            w,
            h,
            short,
            cx,
            cy,
            border: place.border,
            inv: place.inv,
            wall,
            beams,
            bar,
            light_dir,
            light_amp,
            hl,
            hl_r,
            hl_k,
            fill: opts.sticker_fill.clamp(0.3, 0.99),
            radius: 0.12,
            plastic: [18.0, 18.0, 21.0],
        }
    }

    /// The light gradient's factor at a pixel.
    #[inline]
    fn shade(&self, x: f64, y: f64) -> f64 {
        let t = ((x - self.cx) * self.light_dir.cos() + (y - self.cy) * self.light_dir.sin())
            / self.short;
        (1.0 + self.light_amp * t * 2.0).clamp(0.5, 1.4)
    }

    /// The scene's colour at a point of the image (before light, blur and noise).
    #[inline]
    fn sample(&self, x: f64, y: f64) -> [f64; 3] {
        let (n, border, fill, radius) = (self.n, self.border, self.fill, self.radius);
        let g = self.inv.apply([x, y]).unwrap_or([-1e9, -1e9]);
        if let Some((edge, depth, slope, color)) = self.bar {
            let nf = n as f64;
            let (along, across) = match edge {
                0 => (g[0], g[1]),
                1 => (g[1], nf - g[0]),
                2 => (g[0], nf - g[1]),
                _ => (g[1], g[0]),
            };
            if across < depth + slope * (along - nf / 2.0) {
                return color;
            }
        }
        if g[0] >= -border
            && g[1] >= -border
            && g[0] < n as f64 + border
            && g[1] < n as f64 + border
        {
            let (c, r) = (g[0].floor(), g[1].floor());
            if c >= 0.0 && r >= 0.0 && (c as usize) < n && (r as usize) < n {
                let (fx, fy) = ((g[0] - c - 0.5).abs(), (g[1] - r - 0.5).abs());
                let hs = fill / 2.0;
                let inside = if fx > hs || fy > hs {
                    false
                } else {
                    let (dx, dy) = (fx - (hs - radius), fy - (hs - radius));
                    dx <= 0.0 || dy <= 0.0 || dx * dx + dy * dy <= radius * radius
                };
                if inside {
                    let i = r as usize * n + c as usize;
                    let col = self.colors.get(i).copied().unwrap_or([128, 128, 128]);
                    return [col[0] as f64, col[1] as f64, col[2] as f64];
                }
            }
            return self.plastic;
        }
        for b in &self.beams {
            let (px, py) = (x - b.c[0], y - b.c[1]);
            let a = px * b.d[0] + py * b.d[1];
            let q = -px * b.d[1] + py * b.d[0];
            if a.abs() <= b.half_len && q.abs() <= b.half_w {
                if b.holes {
                    let pitch = 2.0 * b.half_w;
                    let k = (a / pitch).round() * pitch;
                    if ((a - k).powi(2) + q * q).sqrt() < 0.5 * b.half_w {
                        return [b.color[0] * 0.35, b.color[1] * 0.35, b.color[2] * 0.35];
                    }
                }
                return b.color;
            }
        }
        let t = y / self.h as f64;
        let wall = self.wall;
        [
            wall[0] * (0.8 + 0.3 * t),
            wall[1] * (0.8 + 0.3 * t),
            wall[2] * (0.8 + 0.3 * t),
        ]
    }

    /// Every pixel: four samples averaged, times the light, plus the highlight.
    fn rasterise(&self) -> Vec<f32> {
        let (w, h) = (self.w, self.h);
        let mut buf = vec![0f32; w * h * 3];
        for y in 0..h {
            for x in 0..w {
                let mut acc = [0.0; 3];
                for (ox, oy) in [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)] {
                    let p = self.sample(x as f64 + ox, y as f64 + oy);
                    for c in 0..3 {
                        acc[c] += p[c] / 4.0;
                    }
                }
                let (fx, fy) = (x as f64 + 0.5, y as f64 + 0.5);
                let s = self.shade(fx, fy);
                let d2 = ((fx - self.hl[0]).powi(2) + (fy - self.hl[1]).powi(2))
                    / (self.hl_r * self.hl_r);
                let glare = self.hl_k * 255.0 * (-d2).exp();
                let i = 3 * (y * w + x);
                for c in 0..3 {
                    buf[i + c] = (acc[c] * s + glare) as f32;
                }
            }
        }
        buf
    }
}

/// The camera's part: a blur of a drawn strength, then sensor noise, rounded to bytes.
fn camera_finish(
    mut buf: Vec<f32>,
    w: usize,
    h: usize,
    rng: &mut ChaCha8Rng,
    opts: &RenderOptions,
) -> Vec<u8> {
    let (b0, b1) = (opts.blur.0.min(opts.blur.1), opts.blur.0.max(opts.blur.1));
    let sigma = if b1 > b0 { rng.gen_range(b0..b1) } else { b0 };
    if sigma > 0.05 {
        gaussian_blur(&mut buf, w, h, sigma);
    }
    let noise = if opts.noise > 0.0 {
        rng.gen_range(0.0..opts.noise)
    } else {
        0.0
    };
    let mut data = Vec::with_capacity(w * h * 3);
    let mut fast = FastRng(rng.gen::<u64>() | 1);
    for v in buf {
        let e = if noise > 0.0 {
            fast.gauss() * noise
        } else {
            0.0
        };
        data.push((v as f64 + e).round().clamp(0.0, 255.0) as u8);
    }
    data
}

/// Per-pixel noise needs many draws: a small xorshift generator seeded from the render's
/// ChaCha stream keeps that cheap (and still fully determined by the seed).
struct FastRng(u64);

impl FastRng {
    fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Approximately standard normal (Irwin-Hall, sum of four uniforms, scaled).
    fn gauss(&mut self) -> f64 {
        let s: f64 = (0..4).map(|_| self.next_f64()).sum();
        (s - 2.0) * (3.0f64).sqrt()
    }
}

fn gaussian_blur(buf: &mut [f32], w: usize, h: usize, sigma: f64) {
    let r = (3.0 * sigma).ceil() as isize;
    let k: Vec<f32> = (-r..=r)
        .map(|i| (-(i * i) as f64 / (2.0 * sigma * sigma)).exp() as f32)
        .collect();
    let sum: f32 = k.iter().sum();
    let k: Vec<f32> = k.iter().map(|v| v / sum).collect();
    let mut tmp = vec![0f32; buf.len()];
    blur_pass(buf, &mut tmp, w, h, &k, true);
    blur_pass(&tmp, buf, w, h, &k, false);
}

/// One 1-D pass of the (odd, centred) kernel `k` over an RGB float image, along rows
/// (`horizontal`) or columns, clamping at the border.
fn blur_pass(src: &[f32], dst: &mut [f32], w: usize, h: usize, k: &[f32], horizontal: bool) {
    let r = (k.len() / 2) as isize;
    for y in 0..h {
        for x in 0..w {
            for c in 0..3 {
                let mut a = 0.0;
                for (j, kv) in k.iter().enumerate() {
                    let d = j as isize - r;
                    let at = if horizontal {
                        y * w + (x as isize + d).clamp(0, w as isize - 1) as usize
                    } else {
                        (y as isize + d).clamp(0, h as isize - 1) as usize * w + x
                    };
                    a += kv * src[3 * at + c];
                }
                dst[3 * (y * w + x) + c] = a;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_are_seeded() {
        let colors = [[200, 30, 30]; 9];
        let o = RenderOptions::default();
        assert_eq!(
            render_face(&colors, 3, &o, 1),
            render_face(&colors, 3, &o, 1)
        );
        assert_ne!(
            render_face(&colors, 3, &o, 1),
            render_face(&colors, 3, &o, 2)
        );
    }

    #[test]
    fn sticker_centres_show_their_colour() {
        let colors: Vec<[u8; 3]> = (0..4).map(|i| [60 * i as u8 + 40, 200, 30]).collect();
        let o = RenderOptions {
            occlusion: 0.0,
            highlight: 0.0,
            noise: 0.0,
            perspective: 0.0,
            ..RenderOptions::default()
        };
        let r = render_face_truth(&colors, 2, &o, 3);
        for (i, q) in r.stickers.iter().enumerate() {
            let c = crate::scan::geom::quad_centre(q);
            let p = r.image.get(c[0] as usize, c[1] as usize);
            assert!((p[1] as i32 - 200).abs() < 70, "sticker {i}: {p:?}");
        }
    }
}
