//! Unit tests of the resolver's parts and of [`super::resolve`] on synthetic scans.

use super::classes::fit;
use super::labelling::conjugates;
use super::legal::{same_partition, schemes};
use super::light::Illumination;
use super::readings::{reading_noise, to_linear};
use super::*;
use crate::color::Palette;

#[test]
fn a_renamed_grouping_is_the_same_partition() {
    assert!(same_partition(&[0, 0, 1, 2, 1], &[3, 3, 0, 5, 0]));
    assert!(same_partition(&[0, 1, 2], &[0, 1, 2]));
    // Two groups merged, or one split: different cubes.
    assert!(!same_partition(&[0, 0, 1, 2], &[0, 0, 1, 1]));
    assert!(!same_partition(&[0, 0, 1, 1], &[0, 1, 2, 2]));
    assert!(!same_partition(&[0, 1], &[0, 1, 1]));
}

#[test]
fn a_reading_s_own_error_replaces_the_device_model_except_when_clipped() {
    let wb = [1.0; 3];
    let v = [120.0, 80.0, 40.0];
    let lab = lab_of_linear(to_linear(v, Scale::Rgb8, wb));
    let m = Model::default();
    let device = reading_noise(v, None, Scale::Rgb8, wb, 1.0, &lab, &m);
    let own = reading_noise(v, Some([0.1; 3]), Scale::Rgb8, wb, 1.0, &lab, &m);
    let large = reading_noise(v, Some([3.0; 3]), Scale::Rgb8, wb, 1.0, &lab, &m);
    for k in 0..3 {
        assert!(
            own[k] < device[k] && device[k] < large[k],
            "{own:?} {device:?} {large:?}"
        );
    }
    let hot = [255.0, 80.0, 40.0];
    let lab = lab_of_linear(to_linear(hot, Scale::Rgb8, wb));
    let a = reading_noise(hot, None, Scale::Rgb8, wb, 1.0, &lab, &m);
    let b = reading_noise(hot, Some([0.1; 3]), Scale::Rgb8, wb, 1.0, &lab, &m);
    assert!(b[0] > 0.5 * a[0], "clipped stays uncertain: {a:?} {b:?}");
}

#[test]
fn reading_noise_follows_the_device() {
    // Relative to its own chroma, a near-black camera reading hardly resolves its hue
    // (a count is a large step there); a bright one does; a clipped channel is
    // uncertain in absolute terms.
    let lab_var = |v: [f64; 3], scale: Scale, wb: [f64; 3]| {
        let lab = lab_of_linear(to_linear(v, scale, wb));
        (
            lab,
            reading_noise(v, None, scale, wb, 1.0, &lab, &Model::default()),
        )
    };
    let rel =
        |(lab, var): ([f64; 3], [f64; 3])| (var[1] + var[2]) / (lab[1].powi(2) + lab[2].powi(2));
    let one = [1.0; 3];
    let dark = lab_var([6.0, 3.0, 2.0], Scale::Rgb8, one);
    let bright = lab_var([200.0, 100.0, 67.0], Scale::Rgb8, one);
    assert!(rel(dark) > 20.0 * rel(bright), "{dark:?} {bright:?}");
    let clipped = lab_var([255.0, 100.0, 67.0], Scale::Rgb8, one);
    assert!(clipped.1[1] > 20.0 * bright.1[1], "{clipped:?} {bright:?}");
    // EV3 counts: the same relation.
    let wb = [300.0, 500.0, 290.0];
    let dark = lab_var([9.0, 7.5, 5.0], Scale::Ev3Raw, wb);
    let bright = lab_var([240.0, 200.0, 130.0], Scale::Ev3Raw, wb);
    assert!(rel(dark) > 20.0 * rel(bright), "{dark:?} {bright:?}");
}

#[test]
fn class_frame_separates_fading_from_hue() {
    // A class of oranges whose wear pulls some toward grey: the fit puts the spread on
    // the chroma axis, not across the hue.
    let base = [60.0, 40.0, 50.0];
    let labs: Vec<[f64; 3]> = (0..9)
        .map(|k| {
            let w = 1.0 - 0.05 * k as f64;
            [base[0] + 0.3 * k as f64, base[1] * w, base[2] * w]
        })
        .collect();
    let noise = vec![[0.01; 3]; 9];
    let labels = vec![0usize; 9];
    let c = fit(&labs, &noise, &labels, None, &Model::default())[0];
    assert!(c.var[1] > 10.0 * c.var[2], "{:?}", c.var);
    // A grey-shifted orange costs less than one turned toward red by the same amount.
    let faded = [60.0, 30.0, 37.5];
    let redder = [60.0, 40.0 + 7.7, 50.0 - 9.6];
    assert!(c.cost(&faded, &[0.0; 3]) < c.cost(&redder, &[0.0; 3]));
}

#[test]
fn whole_cube_recolourings_are_legal_and_keep_centres() {
    use crate::cube::{random_state, FaceletCube};
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    for _ in 0..5 {
        let cube = random_state(Size::Three, &mut rng);
        let labels: Vec<usize> = cube.colors().iter().map(|f| f.index()).collect();
        let alts = conjugates(&labels);
        // Rotations that keep every axis (the three half turns) always give legal
        // cubes; others may break the twist or flip and are left out.
        assert!((3..=23).contains(&alts.len()), "{}", alts.len());
        let z2: Vec<usize> = labels
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                let f = Face::ALL[c];
                match f {
                    _ if i % 9 == 4 => c,
                    Face::U | Face::D | Face::R | Face::L => f.opposite().index(),
                    _ => c,
                }
            })
            .collect();
        assert!(alts.contains(&z2));
        for l in &alts {
            assert_ne!(l, &labels);
            for f in 0..6 {
                assert_eq!(l[f * 9 + 4], f);
            }
            let colors: Vec<Face> = l.iter().map(|&c| Face::ALL[c]).collect();
            let c = FaceletCube::from_colors(Size::Three, colors).unwrap();
            assert!(CubieCube::from_facelets(&c).is_some_and(|c| c.is_solvable()));
        }
    }
}

#[test]
fn thirty_schemes_all_distinct() {
    let s = schemes();
    assert_eq!(s.len(), 30);
    for (i, a) in s.iter().enumerate() {
        for b in &s[i + 1..] {
            assert_ne!(a, b);
        }
        let mut seen = [false; 6];
        for &f in a {
            seen[f] = true;
        }
        assert!(seen.iter().all(|&x| x));
    }
}

#[test]
fn illumination_recovers_face_and_kind_gains() {
    use crate::cube::FaceletCube;
    let cube = FaceletCube::solved(Size::Three);
    let labels: Vec<usize> = cube.colors().iter().map(|f| f.index()).collect();
    let face_gain: [f64; 6] = [0.2, -0.1, 0.0, 0.3, -0.2, -0.2];
    let kind_gain = [-0.1, 0.05, 0.2];
    let base = [0.5, 0.3, 0.2];
    let mut il = Illumination::new(Size::Three, Model::default().light_prior);
    let lin: Vec<[f64; 3]> = (0..54)
        .map(|i| {
            let g = (face_gain[il.face_of(i)] + kind_gain[il.kind_of(i)]).exp();
            // Every class has the same colour here, scaled by its index.
            let k = 1.0 + labels[i] as f64 * 0.1;
            base.map(|v| v * g * k)
        })
        .collect();
    for _ in 0..8 {
        il.estimate(&lin, &labels, None);
    }
    // Solved cube: face and class coincide, so only the kind pattern is identifiable;
    // the faces' gains carry no evidence and stay at even light (the prior), and the
    // kind pattern is recovered, shrunk toward even light by the prior's weight.
    assert!(il.face.iter().all(|g| g.abs() < 1e-9), "{:?}", il.face);
    let mean = (4.0 * kind_gain[0] + 4.0 * kind_gain[1] + kind_gain[2]) / 9.0;
    for (est, truth) in il.kind.iter().zip(kind_gain) {
        let ratio = est / (truth - mean);
        assert!((0.6..=1.0).contains(&ratio), "{:?}", il.kind);
    }
}

#[test]
fn resolves_a_synthetic_scan_and_reports_margins() {
    use crate::color::synth::{synth_scan, Appearance, Conditions};
    use crate::cube::random_state;
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
    let cube = random_state(Size::Three, &mut rng);
    let app = Appearance::new(
        Palette::Standard,
        Conditions::for_palette(Palette::Standard),
        9,
    );
    let scan = synth_scan(&cube, &app, Scale::Rgb8, &mut rng);
    let res = resolve(&scan, &ResolveOptions::default()).unwrap();
    assert_eq!(res.cube.colors(), cube.colors());
    assert!(res.confident && res.doubtful.is_empty());
    assert!(res.cube_margin >= DEFAULT_DOUBT_NATS);
    assert_eq!(res.stickers.len(), 54);
    assert!(res.stickers.iter().filter(|s| s.margin > 0.0).count() > 45);
    // Same seed, same answer.
    let again = resolve(&scan, &ResolveOptions::default()).unwrap();
    assert_eq!(again.cube.colors(), res.cube.colors());
}

#[test]
fn a_wrong_count_is_an_error_not_a_panic() {
    let scan = RawScan::new(Size::Three, Scale::Rgb8, vec![[1.0, 2.0, 3.0]; 53]);
    assert!(matches!(
        resolve(&scan, &ResolveOptions::default()),
        Err(ResolveError::Scan(_))
    ));
    // Every reading identical, or all dark: no cube at all, said as such, even for
    // --best-effort; never a panic.
    let flat = RawScan::new(Size::Three, Scale::Rgb8, vec![[100.0, 100.0, 100.0]; 54]);
    let flat2 = RawScan::new(Size::Two, Scale::Ev3Raw, vec![[0.0, 0.0, 0.0]; 24]);
    for (scan, best_effort) in [(&flat, false), (&flat, true), (&flat2, true)] {
        let opts = ResolveOptions {
            best_effort,
            ..ResolveOptions::default()
        };
        assert!(matches!(resolve(scan, &opts), Err(ResolveError::NoCube(_))));
    }
}

#[test]
fn a_redealt_scan_keeps_each_piece_s_readings_and_resolves_to_its_cube() {
    use crate::color::synth::{synth_scan, Appearance, Conditions};
    use crate::cube::{random_state, FaceletCube};
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(21);
    for size in [Size::Three, Size::Two] {
        let truth = random_state(size, &mut rng);
        let app = Appearance::new(Palette::Faded, Conditions::for_palette(Palette::Faded), 5);
        for scale in [Scale::Rgb8, Scale::Ev3Raw] {
            let scan = synth_scan(&truth, &app, scale, &mut rng);
            // Dealt into its own cube, a scan is itself (up to the relit rounding).
            let same = redeal(&scan, &truth, &truth).unwrap();
            for (a, b) in same.facelets.iter().zip(&scan.facelets) {
                for k in 0..3 {
                    assert!((a[k] - b[k]).abs() <= 0.5, "{a:?} {b:?}");
                }
            }
            let target = random_state(size, &mut rng);
            let dealt = redeal(&scan, &truth, &target).unwrap();
            // Centres keep their readings; every reading comes from the original scan,
            // relit by at most the faces' light ratio.
            if size == Size::Three {
                for f in 0..6 {
                    assert_eq!(dealt.facelets[f * 9 + 4], scan.facelets[f * 9 + 4]);
                }
            }
            let res = resolve(&dealt, &ResolveOptions::default()).unwrap();
            let want = FaceletCube::parse(&target.to_letters()).unwrap();
            assert_eq!(res.cube.colors(), want.colors(), "{size} {scale:?}");
            // The model scores the true cube below any other.
            let opts = ResolveOptions::default();
            let own = cube_cost(&dealt, &opts, &want).unwrap().unwrap();
            let other = cube_cost(&dealt, &opts, &FaceletCube::solved(size))
                .unwrap()
                .unwrap();
            assert!(own < other, "{own} {other}");
        }
    }
    // Pieces that the truth does not hold cannot be dealt.
    let scan = RawScan::new(Size::Three, Scale::Rgb8, vec![[100.0, 50.0, 20.0]; 54]);
    let mut colors = crate::cube::FaceletCube::solved(Size::Three)
        .colors()
        .to_vec();
    colors.swap(0, 9);
    let odd = crate::cube::FaceletCube::from_colors(Size::Three, colors).unwrap();
    let target = random_state(Size::Three, &mut rng);
    assert!(redeal(&scan, &odd, &target).is_none());
}

#[test]
fn combined_reads_carry_the_standard_error_of_their_mean() {
    let one = vec![vec![[100.0, 50.0, 20.0]]; 54];
    let single = combine_reads(Size::Three, Scale::Rgb8, &one);
    let steady = combine_reads(
        Size::Three,
        Scale::Rgb8,
        &vec![vec![[100.0, 50.0, 20.0]; 4]; 54],
    );
    let varied = combine_reads(
        Size::Three,
        Scale::Rgb8,
        &vec![vec![[90.0, 50.0, 20.0], [110.0, 50.0, 20.0]]; 54],
    );
    let s = |scan: &RawScan| scan.sigma.as_ref().unwrap()[0];
    assert_eq!(single.facelets[0], [100.0, 50.0, 20.0]);
    // Four agreeing reads: half the device's noise; two far apart: their own spread.
    assert!((s(&steady)[0] - s(&single)[0] / 2.0).abs() < 1e-12);
    assert!(s(&varied)[0] > 5.0 && s(&varied)[1] < s(&single)[1]);
    assert_eq!(varied.facelets[0][0], 100.0);
    varied.check().unwrap();
}

/// A seeded synthetic scan of `cube`.
fn synthetic(
    cube: &crate::cube::FaceletCube,
    palette: crate::color::Palette,
    scale: Scale,
    seed: u64,
) -> RawScan {
    use crate::color::synth::{synth_scan, Appearance, Conditions};
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let app = Appearance::new(palette, Conditions::for_palette(palette), seed);
    synth_scan(cube, &app, scale, &mut rng)
}

#[test]
fn a_scan_with_one_face_unread_resolves_to_the_cube_six_faces_give() {
    use crate::color::Palette;
    use crate::cube::{prove, random_state};
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let mut checked = 0;
    for k in 0..12u64 {
        for size in [Size::Three, Size::Two] {
            let cube = random_state(size, &mut rng);
            let scale = [Scale::Rgb8, Scale::Ev3Raw][k as usize % 2];
            let scan = synthetic(&cube, Palette::Standard, scale, 100 + k);
            let face = Face::ALL[k as usize % 6];
            let five = scan.without_face(face);
            if !prove(&cube, &five.read_mask()).is_proven() {
                continue; // the five faces do not determine this cube (see the next test)
            }
            let six = resolve(&scan, &ResolveOptions::default()).unwrap();
            let res = resolve(&five, &ResolveOptions::default()).unwrap();
            assert_eq!(
                res.cube.colors(),
                six.cube.colors(),
                "{size} seed {k} face {face}"
            );
            assert!(res.confident);
            // The whole cube, the unread face filled in and said to be unread.
            assert_eq!(res.stickers.len(), size.stickers());
            let per = size.per_face();
            let unread: Vec<usize> = (face.index() * per..(face.index() + 1) * per).collect();
            assert_eq!(res.unread(), unread);
            for &i in &unread {
                let s = &res.stickers[i];
                assert!(!s.read && s.runner_up.is_none() && s.margin == 0.0);
            }
            checked += 1;
        }
    }
    assert!(checked >= 18, "{checked}");
}

/// The unread face's pieces can be placed in two legal ways when two pairs of its edges
/// show the same colour on their read sides (swapping both pairs keeps the parity), or
/// three show one colour (a 3-cycle): then no reading decides, and the resolver must say
/// so. (Its corners are always decided: two colours in their cyclic order name a corner;
/// and two edges alone are decided by the parity the corners fix.)
#[test]
fn an_unread_face_the_rules_cannot_fill_in_is_a_doubt_not_a_guess() {
    use crate::color::Palette;
    use crate::cube::{face_mask, prove, random_state, Proof};
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let mask = face_mask(Size::Three, 0b11_1101); // every face but R
    let (cube, other) = loop {
        let cube = random_state(Size::Three, &mut rng);
        if let Proof::Counter(other) = prove(&cube, &mask) {
            break (cube, other);
        }
    };
    // The other cube shows the same colours wherever a sticker is read.
    let differ: Vec<usize> = (0..54)
        .filter(|&i| cube.colors()[i] != other.colors()[i])
        .collect();
    assert!(
        !differ.is_empty() && differ.iter().all(|&i| !mask[i]),
        "{differ:?}"
    );
    let scan = synthetic(&cube, Palette::Standard, Scale::Ev3Raw, 21).without_face(Face::R);
    match resolve(&scan, &ResolveOptions::default()) {
        Err(ResolveError::Ambiguous { doubtful, best }) => {
            assert!(best.cube_margin < 1e-6, "a tie: {}", best.cube_margin);
            assert!(differ.iter().all(|i| doubtful.contains(i)), "{doubtful:?}");
            assert!(doubtful.iter().all(|&i| !mask[i]), "{doubtful:?}");
            assert!(best.probability() <= 0.5 + 1e-9);
        }
        other => panic!("expected a doubt, got {other:?}"),
    }
    // With the sixth face read, no doubt.
    let full = synthetic(&cube, Palette::Standard, Scale::Ev3Raw, 21);
    let res = resolve(&full, &ResolveOptions::default()).unwrap();
    assert_eq!(res.cube.colors(), cube.colors());
}

#[test]
fn a_solved_cube_with_a_face_unread_is_never_a_confident_wrong_answer() {
    // The unread face's colour is then on no read sticker: its class has none, and a
    // rival that lends it two stickers of another colour must not win.
    use crate::color::Palette;
    use crate::cube::FaceletCube;
    let solved = FaceletCube::solved(Size::Three);
    let mut exact = 0;
    for (k, palette) in Palette::ALL.into_iter().enumerate() {
        for scale in [Scale::Rgb8, Scale::Ev3Raw] {
            let scan = synthetic(&solved, palette, scale, 7 + k as u64);
            for face in Face::ALL {
                match resolve(&scan.without_face(face), &ResolveOptions::default()) {
                    Ok(res) => {
                        assert_eq!(res.cube.colors(), solved.colors(), "{palette:?} {face}");
                        exact += 1;
                    }
                    Err(ResolveError::Ambiguous { .. }) => {}
                    Err(e) => panic!("{palette:?} {scale:?} {face}: {e}"),
                }
            }
        }
    }
    assert!(exact >= 36, "{exact} of 48 exact");
}

#[test]
fn stickers_unread_on_two_faces_are_refused() {
    use crate::color::Palette;
    let cube = crate::cube::FaceletCube::solved(Size::Three);
    let scan = synthetic(&cube, Palette::Standard, Scale::Rgb8, 3)
        .without_face(Face::R)
        .with_unread(&[0]);
    match resolve(&scan, &ResolveOptions::default()) {
        Err(e @ ResolveError::UnreadFaces { .. }) => {
            let ResolveError::UnreadFaces { faces, .. } = &e else {
                unreachable!()
            };
            assert_eq!(faces, &vec![Face::U, Face::R]);
            assert!(e.to_string().contains("U1"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    // Part of one face is fine (a scan stopped before its last face was done).
    let part = synthetic(&cube, Palette::Standard, Scale::Rgb8, 3).with_unread(&[9, 10, 13]);
    let res = resolve(&part, &ResolveOptions::default()).unwrap();
    assert_eq!(res.cube.colors(), cube.colors());
    assert_eq!(res.unread(), vec![9, 10, 13]);
}

#[test]
fn a_twisted_corner_is_named_a_contradiction_never_a_confident_legal_cube() {
    // The solved cube with its URF corner turned clockwise in place: no legal cube shows
    // these colours, and the nearest legal ones contradict three clear readings.
    let twisted =
        FaceletCube::parse("UUUUUUUUFURRRRRRRRFFRFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB").unwrap();
    let best_effort = ResolveOptions {
        best_effort: true,
        ..ResolveOptions::default()
    };
    for scale in [Scale::Rgb8, Scale::Ev3Raw] {
        for seed in 0..3 {
            let scan = synthetic(&twisted, Palette::Standard, scale, 60 + seed);
            let res = resolve(&scan, &best_effort).unwrap();
            assert!(!res.confident, "{scale:?} {seed}");
            assert_eq!(res.contradicted.len(), 3, "one corner's stickers");
            assert!(res.contradicted.iter().all(|i| res.doubtful.contains(i)));
            assert_eq!(res.as_read().colors(), twisted.colors(), "the cube as read");
            let rule = res.contradiction.clone().unwrap();
            assert!(rule.contains("a corner is twisted"), "{rule}");
            assert_eq!(res.probability(), 0.0);
            assert!(matches!(
                resolve(&scan, &ResolveOptions::default()),
                Err(ResolveError::Ambiguous { .. })
            ));
            // The same cube untwisted reads as itself, confidently, with nothing contradicted.
            let solved = synthetic(
                &FaceletCube::solved(Size::Three),
                Palette::Standard,
                scale,
                60 + seed,
            );
            let res = resolve(&solved, &ResolveOptions::default()).unwrap();
            assert!(res.confident && res.contradicted.is_empty() && res.contradiction.is_none());
            // One sticker reading another face's colour (worn, or misread) makes a colour
            // too many, not a cube put together wrong: the cube's rules decide.
            let mut misread = solved.clone();
            misread.facelets[53] = misread.facelets[22];
            let res = resolve(&misread, &best_effort).unwrap();
            assert!(res.contradicted.is_empty(), "{scale:?} {seed}");
            assert!(res.cube.is_solved());
        }
    }
}

#[test]
fn the_centres_tell_a_cube_of_the_other_size() {
    use super::other_size;
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
    let cube = crate::cube::random_state(Size::Three, &mut rng);
    let mut scan = synthetic(&cube, Palette::Standard, Scale::Ev3Raw, 5);
    assert_eq!(other_size(&scan, None), None, "a 3x3x3 read as one");
    // A 2x2x2 under a 3x3x3's program: its centres (and edges) fall on the gaps.
    for f in 0..6 {
        for k in [1, 3, 4, 5, 7] {
            scan.facelets[f * 9 + k] = [12.0, 15.0, 9.0];
        }
    }
    assert_eq!(other_size(&scan, None), Some(Size::Two));
    // One centre bright is no 2x2x2.
    scan.facelets[4] = [300.0, 420.0, 280.0];
    assert_eq!(other_size(&scan, None), None);

    let pocket = crate::cube::random_state(Size::Two, &mut rng);
    let scan = synthetic(&pocket, Palette::Standard, Scale::Ev3Raw, 5);
    assert_eq!(
        other_size(&scan, None),
        None,
        "no centre reading, no verdict"
    );
    assert_eq!(
        other_size(&scan, Some([13.0, 17.0, 9.0])),
        None,
        "the gap: a 2x2x2"
    );
    // The dimmest sticker of the scan at the centre: a 3x3x3's centre sticker.
    let dimmest = *scan
        .facelets
        .iter()
        .min_by(|a, b| a.iter().sum::<f64>().total_cmp(&b.iter().sum::<f64>()))
        .unwrap();
    assert_eq!(other_size(&scan, Some(dimmest)), Some(Size::Three));
}

#[test]
fn the_least_certain_stickers_named_when_nothing_fits_are_never_centres() {
    // Every sticker clear (margin 10) but the six centres (margin 0.1) and U1 U2 U3 U4 U6
    // F1 (margins 1 to 5.5): those six are named, no centre.
    let mut cost = vec![[0.0, 10.0, 10.0, 10.0, 10.0, 10.0]; 54];
    for f in 0..6 {
        cost[f * 9 + 4][1] = 0.1;
    }
    for (k, i) in [0, 1, 2, 3, 5].into_iter().enumerate() {
        cost[i][1] = 1.0 + k as f64;
    }
    cost[18][1] = 5.5;
    let named = least_certain(&cost, &[true; 54], Size::Three);
    assert_eq!(named, vec![0, 1, 2, 3, 5, 18]);
    // A 2x2x2 has no centres: its smallest margins are named as they are.
    let mut cost = vec![[0.0, 10.0, 10.0, 10.0, 10.0, 10.0]; 24];
    cost[3][1] = 0.1;
    assert!(least_certain(&cost, &[true; 24], Size::Two).contains(&3));
}
