//! Pictures of a cube: the unfolded net as text (with ANSI colours or plain letters) and as
//! SVG. Pure functions returning strings; the caller decides where they go.
//!
//! Level: part of `cube`; depends on `face` and `facelet`. Builds strings only; must not depend on anything outside `cube`; no I/O.

use super::face::Face;
use super::facelet::FaceletCube;

/// Display colours for the six faces, sRGB.
#[derive(Clone, Debug, PartialEq)]
pub struct NetStyle {
    pub colors: [[u8; 3]; 6],
}

const WESTERN: [[u8; 3]; 6] = [
    [245, 245, 245], // U white
    [200, 20, 30],   // R red
    [0, 155, 72],    // F green
    [255, 213, 0],   // D yellow
    [255, 100, 0],   // L orange
    [0, 70, 173],    // B blue
];

fn named_colour(c: char) -> Option<[u8; 3]> {
    Some(match c.to_ascii_uppercase() {
        'W' => [245, 245, 245],
        'Y' => [255, 213, 0],
        'R' => [200, 20, 30],
        'O' => [255, 100, 0],
        'G' => [0, 155, 72],
        'B' => [0, 70, 173],
        'P' => [230, 80, 180],
        'K' => [30, 30, 30],
        _ => return None,
    })
}

impl NetStyle {
    /// Colours that fit the cube's symbols: the Western scheme for URFDLB letters, the
    /// named colours for colour initials (`W Y R O G B`), else the Western scheme by face.
    pub fn for_cube(cube: &FaceletCube) -> NetStyle {
        let sym = cube.symbols();
        if sym == ['U', 'R', 'F', 'D', 'L', 'B'] {
            return NetStyle { colors: WESTERN };
        }
        let named: Vec<Option<[u8; 3]>> = sym.iter().map(|&c| named_colour(c)).collect();
        if named.iter().all(|c| c.is_some()) {
            return NetStyle {
                colors: std::array::from_fn(|i| named[i].expect("checked")),
            };
        }
        NetStyle { colors: WESTERN }
    }
}

/// Grid position (column, row in face units) of each face in the net.
fn face_origin(face: Face) -> (usize, usize) {
    match face {
        Face::U => (1, 0),
        Face::L => (0, 1),
        Face::F => (1, 1),
        Face::R => (2, 1),
        Face::B => (3, 1),
        Face::D => (1, 2),
    }
}

/// The net as text. With `ansi`, each sticker is a coloured block with its symbol;
/// without, plain symbols.
pub fn net_text(cube: &FaceletCube, style: &NetStyle, ansi: bool) -> String {
    let n = cube.size().n();
    let width = 4 * n;
    let height = 3 * n;
    let mut grid: Vec<Vec<Option<Face>>> = vec![vec![None; width]; height];
    let mut sym_grid: Vec<Vec<char>> = vec![vec![' '; width]; height];
    let sym = cube.symbols();
    for (i, &color) in cube.colors().iter().enumerate() {
        let face = Face::ALL[i / (n * n)];
        let (ox, oy) = face_origin(face);
        let (r, c) = ((i % (n * n)) / n, (i % (n * n)) % n);
        grid[oy * n + r][ox * n + c] = Some(color);
        sym_grid[oy * n + r][ox * n + c] = sym[color.index()];
    }
    let mut out = String::new();
    for (y, row) in grid.iter().enumerate() {
        let mut line = String::new();
        for (x, cell) in row.iter().enumerate() {
            if x > 0 && x % n == 0 && !ansi {
                line.push(' ');
            }
            match cell {
                None => line.push_str(if ansi { "   " } else { "  " }),
                Some(color) if ansi => {
                    let [r, g, b] = style.colors[color.index()];
                    let fg = if (r as u32 * 299 + g as u32 * 587 + b as u32 * 114) / 1000 > 140 {
                        30
                    } else {
                        97
                    };
                    line.push_str(&format!(
                        "\x1b[48;2;{r};{g};{b}m\x1b[{fg}m {} \x1b[0m",
                        sym_grid[y][x]
                    ));
                }
                Some(_) => {
                    line.push(sym_grid[y][x]);
                    line.push(' ');
                }
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The net as a standalone SVG document.
pub fn net_svg(cube: &FaceletCube, style: &NetStyle) -> String {
    let n = cube.size().n();
    let cell = 30;
    let gap = 6;
    let face_px = n * cell;
    let (w, h) = (4 * face_px + 5 * gap, 3 * face_px + 4 * gap);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">\n<rect width=\"{w}\" height=\"{h}\" fill=\"#ffffff\"/>\n"
    );
    let sym = cube.symbols();
    for (i, &color) in cube.colors().iter().enumerate() {
        let face = Face::ALL[i / (n * n)];
        let (ox, oy) = face_origin(face);
        let (r, c) = ((i % (n * n)) / n, (i % (n * n)) % n);
        let x = gap + ox * (face_px + gap) + c * cell;
        let y = gap + oy * (face_px + gap) + r * cell;
        let [cr, cg, cb] = style.colors[color.index()];
        s.push_str(&format!(
            "<rect x=\"{x}\" y=\"{y}\" width=\"{cell}\" height=\"{cell}\" rx=\"4\" fill=\"rgb({cr},{cg},{cb})\" stroke=\"#111\" stroke-width=\"2\"><title>{}{} {}</title></rect>\n",
            face.letter(),
            (i % (n * n)) + 1,
            sym[color.index()]
        ));
    }
    for face in Face::ALL {
        let (ox, oy) = face_origin(face);
        let x = gap + ox * (face_px + gap) + face_px / 2;
        let y = gap + oy * (face_px + gap) + face_px / 2 + 5;
        s.push_str(&format!(
            "<text x=\"{x}\" y=\"{y}\" font-family=\"sans-serif\" font-size=\"14\" text-anchor=\"middle\" fill=\"#000\" fill-opacity=\"0.35\">{}</text>\n",
            face.letter()
        ));
    }
    s.push_str("</svg>\n");
    s
}
