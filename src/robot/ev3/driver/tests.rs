//! Tests of the driver over an in-memory link.

use super::*;
use crate::robot::ev3::protocol::encode_reply;
use crate::robot::link::MemoryLink;

#[test]
fn stale_replies_are_discarded_and_counters_match() {
    // Answer each command twice: once with a stale counter, then with the right one.
    let t = MemoryLink::with_responder(|m| {
        let c = u16::from_le_bytes([m[2], m[3]]);
        vec![
            encode_reply(c.wrapping_sub(7), true, &[]),
            encode_reply(c, true, &[]),
        ]
    });
    let mut ev3 = Ev3::new(Box::new(t));
    ev3.nop().unwrap();
    ev3.nop().unwrap();
    assert_eq!(ev3.stale_discarded, 2);
}

#[test]
fn error_reply_names_the_command() {
    let t = MemoryLink::with_responder(|m| {
        vec![encode_reply(u16::from_le_bytes([m[2], m[3]]), false, &[])]
    });
    let mut ev3 = Ev3::new(Box::new(t));
    let e = ev3.count(OutputPort::C).unwrap_err();
    assert!(matches!(e, Ev3Error::ErrorReply { .. }));
    assert!(e.to_string().contains("reading motor C's position"), "{e}");
}

#[test]
fn silence_is_a_timeout() {
    let mut ev3 = Ev3::new(Box::new(MemoryLink::new()));
    ev3.timeouts.reply = Duration::from_millis(10);
    let e = ev3.nop().unwrap_err();
    assert!(matches!(e, Ev3Error::Timeout { .. }), "{e}");
    assert!(e.link_failed());
}

#[test]
fn a_count_no_motion_can_reach_stops_at_once() {
    // The motor reads 100, then (one corrupted byte) 100 + 2^24.
    let counts = std::sync::Mutex::new(vec![100i32, 100 + (1 << 24)].into_iter());
    let t = MemoryLink::with_responder(move |m| {
        let c = u16::from_le_bytes([m[2], m[3]]);
        let v = counts.lock().unwrap().next().unwrap_or(0);
        vec![encode_reply(c, true, &v.to_le_bytes())]
    });
    let mut ev3 = Ev3::new(Box::new(t));
    assert_eq!(ev3.count(OutputPort::B).unwrap(), 100);
    let e = ev3.count(OutputPort::B).unwrap_err();
    assert!(matches!(e, Ev3Error::Implausible { .. }), "{e}");
    assert!(e.to_string().contains("corrupted"), "{e}");
    // A move that long is refused before it is sent.
    let mut m = Motor::new(OutputPort::A, MotorKind::Large, 1050.0);
    ev3.idle_count[0] = Some(0);
    let e = ev3
        .start_move_to(&mut m, 5000, 50, (10, 10), true)
        .unwrap_err();
    assert!(matches!(e, Ev3Error::MoveTooLong { .. }), "{e}");
}

/// A brick answering the status polls of one motor (B) with `(count, speed, busy)`
/// in turn, each reply `delay` late, its clock `step` further on each time.
fn polled(replies: Vec<(i32, i8, bool)>, delay: Duration, step: Duration) -> Ev3 {
    let mut c = DirectCommand::new();
    let count = c.output_get_count(OutputPort::B);
    let (speed, _) = c.output_read(OutputPort::B);
    let busy = c.output_test(OutputPort::B.bit());
    let clock = c.timer_read_us();
    let replies = std::sync::Mutex::new(replies.into_iter());
    let now = std::sync::atomic::AtomicU32::new(7_000_000);
    let t = MemoryLink::with_responder(move |m| {
        let n = u16::from_le_bytes([m[2], m[3]]);
        let (cnt, sp, b) = replies.lock().unwrap().next().unwrap_or((0, 0, false));
        std::thread::sleep(delay);
        let us = now.fetch_add(step.as_micros() as u32, Ordering::SeqCst);
        let mut g = vec![0u8; clock.offset + 4];
        g[count.offset..count.offset + 4].copy_from_slice(&cnt.to_le_bytes());
        g[speed.offset] = sp as u8;
        g[busy.offset] = b as u8;
        g[clock.offset..clock.offset + 4].copy_from_slice(&us.to_le_bytes());
        vec![encode_reply(n, true, &g)]
    });
    let mut ev3 = Ev3::new(Box::new(t));
    ev3.timeouts.stall = Duration::from_millis(100);
    ev3.timeouts.poll = Duration::from_millis(1);
    ev3
}

#[test]
fn a_motor_the_brick_reads_turning_is_not_stalled_by_the_hosts_clock() {
    // A brick whose counts lag the host's clock (replies held back, or a simulated
    // brick behind its clock): the count stands still over more than the stall time
    // of the host's clock, but the brick reads the motor turning, and it arrives.
    let ms = Duration::from_millis;
    let mut replies = vec![(100, 40, true); 6];
    replies.push((130, 0, false));
    let mut ev3 = polled(replies, ms(40), ms(40));
    let mut m = Motor::new(OutputPort::B, MotorKind::Large, 1050.0);
    m.target = 130;
    ev3.wait("a move", &[m], Duration::from_secs(10)).unwrap();
    // The same counts with the brick reading the motor standing still: a stall, once
    // three stall times (a start from rest) have passed.
    let mut ev3 = polled(vec![(100, 0, true); 12], ms(40), ms(40));
    let e = ev3
        .wait("a move", &[m], Duration::from_secs(10))
        .unwrap_err();
    assert!(
        matches!(
            e,
            Ev3Error::Stalled {
                position: 100,
                ms: 300..,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn a_start_is_judged_by_the_bricks_clock_not_the_hosts() {
    // LEGO's regulation starts a motor from rest slowly; a brick lagging its host (5 ms
    // of its time for each 40 ms of the host's) reads it standing still over far more
    // than the stall time of the host's clock: not a stall, and the move arrives.
    let ms = Duration::from_millis;
    let mut replies = vec![(100, 0, true); 10];
    replies.extend([(110, 20, true), (130, 0, false)]);
    let mut ev3 = polled(replies, ms(40), ms(5));
    let mut m = Motor::new(OutputPort::B, MotorKind::Large, 1050.0);
    m.target = 130;
    ev3.wait("a move", &[m], Duration::from_secs(10)).unwrap();
    // Once moving, a motor standing still for the stall time (of the brick's clock) has
    // stalled.
    let mut replies = vec![(100, 0, true), (110, 20, true)];
    replies.extend(vec![(110, 0, true); 10]);
    let mut ev3 = polled(replies, ms(1), ms(40));
    let e = ev3
        .wait("a move", &[m], Duration::from_secs(10))
        .unwrap_err();
    assert!(
        matches!(
            e,
            Ev3Error::Stalled {
                position: 110,
                ms: 100..=200,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn a_colour_the_sensor_cannot_give_is_read_again() {
    // One corrupted byte turns a red channel of 120 into 120 + 2^28; the read is sent
    // again and the true reading comes back.
    let replies =
        std::sync::Mutex::new(vec![[120 + (1 << 28), 40, 20], [120i32, 40, 20]].into_iter());
    let t = MemoryLink::with_responder(move |m| {
        let c = u16::from_le_bytes([m[2], m[3]]);
        let rgb = replies.lock().unwrap().next().unwrap_or([0, 0, 0]);
        let g: Vec<u8> = rgb.iter().flat_map(|v| v.to_le_bytes()).collect();
        vec![encode_reply(c, true, &g)]
    });
    let mut ev3 = Ev3::new(Box::new(t));
    assert_eq!(ev3.read_rgb(1).unwrap(), [120.0, 40.0, 20.0]);
    assert_eq!(ev3.recoveries, 1);
}

#[test]
fn a_lost_read_reply_is_read_again() {
    // The first reply is lost; the same read sent again is answered.
    let n = std::sync::atomic::AtomicU32::new(0);
    let t = MemoryLink::with_responder(move |m| {
        let c = u16::from_le_bytes([m[2], m[3]]);
        if n.fetch_add(1, Ordering::SeqCst) == 0 {
            return vec![];
        }
        vec![encode_reply(c, true, &42i32.to_le_bytes())]
    });
    let mut ev3 = Ev3::new(Box::new(t));
    ev3.timeouts.reply = Duration::from_millis(20);
    assert_eq!(ev3.count(OutputPort::C).unwrap(), 42);
    assert_eq!(ev3.recoveries, 1);
}

/// A command's label is in words for the user; the `-vv` log adds the operations it sends.
#[test]
fn the_log_names_the_operations_beside_the_label() {
    let t = MemoryLink::with_responder(|m| {
        vec![encode_reply(u16::from_le_bytes([m[2], m[3]]), true, &[])]
    });
    let mut ev3 = Ev3::new(Box::new(t));
    let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let l2 = lines.clone();
    ev3.set_log(move |s| l2.lock().unwrap().push(s.to_string()));
    ev3.nop().unwrap();
    let l = lines.lock().unwrap();
    assert!(
        l[0].starts_with("-> checking that the brick answers [NOP]: "),
        "{l:?}"
    );
}
