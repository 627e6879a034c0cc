//! Integration tests: robot. Every test goes through a real pseudo-terminal: the driver
//! against the in-process simulated brick, and `cubot sim --pty` + `cubot scan --robot`
//! as two processes.

use cubot::color::Palette;
use cubot::cube::{FaceletCube, Size};
use cubot::robot::mindcub3r::{Config, MindCub3r};
use cubot::robot::model::Primitive;
use cubot::robot::sim::{spawn_pty, SimConfig, SimHandle};
use cubot::robot::transport::SerialTransport;

fn sim(seed: u64, speed: f64) -> SimHandle {
    spawn_pty(SimConfig {
        seed,
        speed,
        ..SimConfig::default()
    })
    .expect("start the simulated brick")
}

fn connect(h: &SimHandle) -> MindCub3r {
    let t = SerialTransport::open(h.path().to_str().unwrap()).expect("open the pty");
    MindCub3r::connect(Box::new(t), Config::default()).expect("connect")
}

#[test]
fn primitives_move_the_virtual_cube_as_the_model_says() {
    let h = sim(1, 20.0);
    let mut r = connect(&h);
    r.home().unwrap();
    let mut expect = h.initial_cube().clone();
    for p in [
        Primitive::Tilt,
        Primitive::Spin(1),
        Primitive::Turn(1),
        Primitive::Turn(-1),
        Primitive::Spin(2),
        Primitive::Turn(2),
        Primitive::Tilt,
        Primitive::Spin(-1),
    ] {
        r.execute(p).unwrap();
        let alg = cubot::cube::Alg::from_moves(vec![p.as_move().unwrap()]);
        expect.apply(&alg).unwrap();
        assert_eq!(
            h.cube().to_letters(),
            expect.to_letters(),
            "after {p:?}: {:?}",
            h.take_log()
        );
    }
    assert!(h.take_log().iter().all(|l| !l.contains("fault")));
}

#[test]
fn scan_reads_every_sticker_where_it_was() {
    let h = sim(2, 20.0);
    let mut r = connect(&h);
    let scan = r.scan(Size::Three, &mut |_| {}).unwrap();
    let log = h.take_log();
    assert!(log.is_empty(), "{log:?}");
    // Each reading must be the reading of the colour the simulator's cube had there:
    // compare with the nearest face by mean colour of the centres.
    let cube = h.initial_cube().colors().to_vec();
    let centres: Vec<[f64; 3]> = (0..6).map(|f| scan.facelets[f * 9 + 4]).collect();
    let mut wrong = 0;
    for (i, rgb) in scan.facelets.iter().enumerate() {
        let best = (0..6)
            .min_by(|&a, &b| dist(rgb, &centres[a]).total_cmp(&dist(rgb, &centres[b])))
            .unwrap();
        if best != cube[i].index() {
            wrong += 1;
        }
    }
    assert!(
        wrong <= 3,
        "{wrong} stickers nearer another centre: {:?}",
        scan.facelets
    );
    let _ = (Palette::Standard, FaceletCube::solved(Size::Three));
}

fn dist(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    (0..3).map(|k| (a[k] - b[k]).powi(2)).sum()
}
