//! Integration tests: single moves from the host on the firmware brick (LEGO's VM and
//! d_pwm): the moves a resume, a verification re-scan, a homing fallback and the step
//! commands send one at a time and poll, as opposed to the chunks' programs. The brick
//! here runs slower than the host's clock (`speed` under 1), as a firmware brick starved
//! of CPU does in a campaign: every window the host judges a move by must be the brick's.

use cubot::cube::Size;
use cubot::robot::mindcub3r::model::Primitive;

use super::firmware::{brick, connect};
use super::support::apply_primitive;

/// The moves a resume makes from the host (arm away from hold, a spin, a layer turn with
/// its over-rotation and way back, re-reads of single stickers: turntable to a sticker,
/// sensor arm over it, turntable back to square) on a firmware brick at 0.4 of real time.
/// LEGO's speed regulation starts a motor from rest slowly (the arm leaving hold stands
/// still for 150-300 ms of the brick's time): judged by the host's clock, a lagging
/// brick's starts read as stalls ("arm away: motor A stalled at 101° (target 20°)").
#[test]
fn host_moves_on_a_lagging_firmware_brick_reach_their_targets() {
    let Some(h) = brick(11, 0.4) else { return };
    let mut r = connect(&h);
    r.home()
        .unwrap_or_else(|e| panic!("home: {e}: {:#?}", h.take_log()));
    let mut expect = h.initial_cube().clone();
    for p in [
        Primitive::ArmHold,
        Primitive::ArmAway,
        Primitive::Spin(1),
        Primitive::Turn(1),
        Primitive::Tilt,
        Primitive::ArmAway,
        Primitive::Spin(-1),
    ] {
        r.execute(p)
            .unwrap_or_else(|e| panic!("{p:?}: {e}: {:#?}", h.take_log()));
        apply_primitive(&mut expect, p);
    }
    assert_eq!(
        h.cube().to_letters(),
        expect.to_letters(),
        "{:#?}",
        h.take_log()
    );
    r.begin_frame(Size::Three);
    let read = r
        .rescan(&[0, 1, 2])
        .unwrap_or_else(|e| panic!("re-reading stickers: {e}: {:#?}", h.take_log()));
    assert_eq!(read.len(), 3);
    // Back to square: the cube as it was, and a layer turn after the re-reads still
    // turns the layer the model says.
    r.execute(Primitive::Turn(-1))
        .unwrap_or_else(|e| panic!("Turn(-1) after re-reads: {e}: {:#?}", h.take_log()));
    apply_primitive(&mut expect, Primitive::Turn(-1));
    assert_eq!(
        h.cube().to_letters(),
        expect.to_letters(),
        "{:#?}",
        h.take_log()
    );
}
