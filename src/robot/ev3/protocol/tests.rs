//! Golden tests of the codec: the worked byte examples of the module docs, byte for byte,
//! and round trips of every encoding.

use super::*;

use super::from_hex as h;

#[test]
fn constant_encodings_of_the_reference_table() {
    let cases: &[(i32, &str)] = &[
        (0, "00"),
        (31, "1F"),
        (-1, "3F"),
        (-5, "3B"),
        (-32, "20"),
        (32, "81 20"),
        (-33, "81 DF"),
        (60, "81 3C"),
        (100, "81 64"),
        (-100, "81 9C"),
        (270, "82 0E 01"),
        (-270, "82 F2 FE"),
        (540, "82 1C 02"),
        (1080, "82 38 04"),
        (-1080, "82 C8 FB"),
        (32767, "82 FF 7F"),
        (32768, "83 00 80 00 00"),
        (-40000, "83 C0 63 FF FF"),
    ];
    for &(v, bytes) in cases {
        let mut b = Vec::new();
        push_const(&mut b, v);
        assert_eq!(b, h(bytes), "value {v}");
        let mut pos = 0;
        assert_eq!(decode_param(&b, &mut pos).unwrap(), Param::Const(v));
        assert_eq!(pos, b.len());
    }
    for (off, byte) in [(0, 0x60), (4, 0x64), (8, 0x68)] {
        let mut b = Vec::new();
        push_global(&mut b, off);
        assert_eq!(b, vec![byte]);
    }
    let mut pos = 0;
    assert_eq!(decode_param(&[0x40], &mut pos).unwrap(), Param::Local(0));
}

#[test]
fn decoder_accepts_long_forms_for_small_values() {
    for (bytes, v) in [
        (h("81 05"), Param::Const(5)),
        (h("82 05 00"), Param::Const(5)),
        (h("83 FB FF FF FF"), Param::Const(-5)),
        (h("E1 04"), Param::Global(4)),
        (h("E2 08 00"), Param::Global(8)),
        (h("C1 02"), Param::Local(2)),
        (h("84 41 42 00"), Param::Str("AB".into())),
    ] {
        let mut pos = 0;
        assert_eq!(decode_param(&bytes, &mut pos).unwrap(), v);
        assert_eq!(pos, bytes.len());
    }
    let mut pos = 0;
    assert!(decode_param(&h("82 05"), &mut pos).is_err());
}

#[test]
fn e1_ping() {
    let mut c = DirectCommand::new();
    c.nop();
    assert_eq!(c.encode(0x2A), h("06 00 | 2A 00 | 00 | 00 00 | 01"));
    let r = decode_reply(&h("03 00 2A 00 02")).unwrap();
    assert_eq!((r.counter, r.ok, r.globals.len()), (0x2A, true, 0));
}

#[test]
fn e2_led() {
    let mut c = DirectCommand::no_reply();
    c.led(5);
    assert_eq!(c.encode(0x2B), h("08 00 | 2B 00 | 80 | 00 00 | 82 1B 05"));
}

#[test]
fn e3_e4_step_speed() {
    let b = OutputPort::B.bit();
    let mut c = DirectCommand::new();
    c.step_speed(b, 40, [30, 210, 30], true).output_ready(b);
    assert_eq!(
        c.encode(1),
        h("13 00 | 01 00 | 00 | 00 00 | AE 00 02 81 28 1E 82 D2 00 1E 01 | AA 00 02")
    );
    let mut c = DirectCommand::no_reply();
    c.step_speed(b, -40, [30, 210, 30], true).output_start(b);
    assert_eq!(
        c.encode(2),
        h("13 00 | 02 00 | 80 | 00 00 | AE 00 02 81 D8 1E 82 D2 00 1E 01 | A6 00 02")
    );
}

#[test]
fn e5_test_busy() {
    let mut c = DirectCommand::new();
    let busy = c.output_test(OutputPort::nos(&[OutputPort::A, OutputPort::B]));
    assert_eq!(c.encode(4), h("09 00 | 04 00 | 00 | 01 00 | A9 00 03 60"));
    let r = decode_reply(&h("04 00 | 04 00 | 02 | 01")).unwrap();
    assert_eq!(r.i8(busy).unwrap(), 1);
}

#[test]
fn e6_rgb_raw() {
    let mut c = DirectCommand::new();
    let slots = c.ready_raw(1, device::COLOR, device::COLOR_RGB_RAW, 3);
    assert_eq!(
        c.encode(3),
        h("0F 00 | 03 00 | 00 | 0C 00 | 99 1C 00 01 1D 04 03 60 64 68")
    );
    let r = decode_reply(&h(
        "0F 00 | 03 00 | 02 | FD 00 00 00  24 01 00 00  B7 00 00 00",
    ))
    .unwrap();
    let rgb: Vec<i32> = slots.iter().map(|&s| r.i32(s).unwrap()).collect();
    assert_eq!(rgb, vec![253, 292, 183]);
}

#[test]
fn e7_e8_positions() {
    let mut c = DirectCommand::new();
    let s = c.ready_si(OutputPort::A.as_input(), device::LARGE_MOTOR, 0, 1);
    assert_eq!(
        c.encode(6),
        h("0D 00 | 06 00 | 00 | 04 00 | 99 1D 00 10 07 00 01 60")
    );
    let r = decode_reply(&h("07 00 | 06 00 | 02 | 00 00 04 C2")).unwrap();
    assert_eq!(r.f32(s[0]).unwrap(), -33.0);
    let mut c = DirectCommand::new();
    let s = c.output_get_count(OutputPort::C);
    assert_eq!(c.encode(5), h("09 00 | 05 00 | 00 | 04 00 | B3 00 02 60"));
    let r = decode_reply(&h("07 00 | 05 00 | 02 | 0E 01 00 00")).unwrap();
    assert_eq!(r.i32(s).unwrap(), 270);
}

#[test]
fn e9_to_e11() {
    let mut c = DirectCommand::no_reply();
    c.output_stop(0x0F, false);
    assert_eq!(c.encode(7), h("09 00 | 07 00 | 80 | 00 00 | A3 00 0F 00"));
    let mut c = DirectCommand::new();
    c.output_reset(2).output_clr_count(2);
    assert_eq!(
        c.encode(8),
        h("0B 00 | 08 00 | 00 | 00 00 | A2 00 02 | B2 00 02")
    );
    let mut c = DirectCommand::no_reply();
    c.time_speed(4, 50, [100, 500, 100], false).output_start(4);
    assert_eq!(
        c.encode(9),
        h("15 00 | 09 00 | 80 | 00 00 | AF 00 04 81 32 81 64 82 F4 01 81 64 00 | A6 00 04")
    );
}

#[test]
fn e12_to_e14() {
    let mut c = DirectCommand::new();
    let s = c.ready_si(0, device::INFRARED, 0, 1);
    assert_eq!(
        c.encode(0x0B),
        h("0E 00 | 0B 00 | 00 | 04 00 | 99 1D 00 00 81 21 00 01 60")
    );
    let r = decode_reply(&h("07 00 | 0B 00 | 02 | 00 00 D0 41")).unwrap();
    assert_eq!(r.f32(s[0]).unwrap(), 26.0);

    let mut c = DirectCommand::new();
    c.ready_si(0x10, 7, 0, 1);
    c.ready_si(0x11, 7, 0, 1);
    c.ready_si(0x12, 8, 0, 1);
    c.output_test(7);
    assert_eq!(
        c.encode(0x0C),
        h("21 00 | 0C 00 | 00 | 0D 00 | 99 1D 00 10 07 00 01 60 | 99 1D 00 11 07 00 01 64 | 99 1D 00 12 08 00 01 68 | A9 00 07 6C")
    );

    let mut c = DirectCommand::new();
    let (sp, ta) = c.output_read(OutputPort::B);
    assert_eq!(
        c.encode(0x0D),
        h("0A 00 | 0D 00 | 00 | 08 00 | A8 00 01 60 64")
    );
    assert_eq!((sp.offset, ta.offset), (0, 4));
}

#[test]
fn e15_error_reply_and_bad_frames() {
    let r = decode_reply(&h("03 00 | 34 12 | 04")).unwrap();
    assert_eq!((r.counter, r.ok), (0x1234, false));
    assert!(decode_reply(&h("04 00 34 12 04")).is_err());
    assert!(decode_reply(&h("03 00 34 12 07")).is_err());
    assert!(decode_reply(&h("03 00")).is_err());
}

#[test]
fn frame_buffer_handles_split_and_merged_reads() {
    let mut fb = FrameBuffer::default();
    fb.push(&h("03"));
    assert!(fb.pop().is_none());
    fb.push(&h("00 2A 00 02 03 00"));
    assert_eq!(fb.pop().unwrap(), h("03 00 2A 00 02"));
    assert!(fb.pop().is_none());
    fb.push(&h("2B 00 02"));
    assert_eq!(fb.pop().unwrap(), h("03 00 2B 00 02"));
}

#[test]
fn frame_buffer_drops_bytes_that_cannot_begin_a_frame() {
    let mut fb = FrameBuffer::default();
    // A line robot's text: "HE" read as a length is 17736; "\n" and the next frame's
    // first byte, 2570; the frame's length and type after it are kept.
    let nop = h("06 00 2A 00 00 00 00 01");
    fb.push(b"HELLO\n");
    fb.push(&nop);
    assert_eq!(fb.skip_to_command(), 6);
    assert_eq!(fb.pop().unwrap(), nop);
    // A plausible length followed by no command type goes too.
    fb.push(&h("05 00 FF FF 42"));
    fb.push(&nop);
    assert_eq!(fb.skip_to_command(), 5);
    assert_eq!(fb.pop().unwrap(), nop);
    // A real command's header stays, even before its body has come.
    fb.push(&h("06 00"));
    assert_eq!(fb.skip_to_command(), 0);
    assert!(fb.pop().is_none());
}

#[test]
fn command_round_trip() {
    let mut c = DirectCommand::new();
    c.get_typemode(1);
    let f = decode_command(&c.encode(77)).unwrap();
    assert_eq!((f.counter, f.global, f.local), (77, 2, 0));
    assert!(f.wants_reply());
    assert_eq!(f.body, c.ops);
}

#[test]
fn e16_brick_queries() {
    let mut c = DirectCommand::new();
    let name = c.brick_name(32);
    let fw = c.firmware_version(16);
    let volts = c.battery_volts();
    let level = c.battery_level();
    assert_eq!(
        c.encode(0x0E),
        h("17 00 | 0E 00 | 00 | 35 00 | D3 0D 81 20 60 | 81 0A 10 E1 20 | 81 01 E1 30 | 81 12 E1 34")
    );
    let mut globals = vec![0u8; 53];
    globals[..3].copy_from_slice(b"EV3");
    globals[32..38].copy_from_slice(b"V1.09H");
    globals[48..52].copy_from_slice(&h("CD CC FC 40"));
    globals[52] = 100;
    let mut frame = h("38 00 0E 00 02");
    frame.extend(&globals);
    let r = decode_reply(&frame).unwrap();
    assert_eq!(r.string(name).unwrap(), "EV3");
    assert_eq!(r.string(fw).unwrap(), "V1.09H");
    assert!((r.f32(volts).unwrap() - 7.9).abs() < 1e-6);
    assert_eq!(r.i8(level).unwrap(), 100);
    // A string that does not end within its slot is malformed.
    let mut bad = frame.clone();
    bad[5..5 + 32].fill(b'x');
    assert!(decode_reply(&bad).unwrap().string(name).is_err());
}

#[test]
fn e17_polarity() {
    let mut c = DirectCommand::no_reply();
    c.output_polarity(0x07, 1);
    assert_eq!(
        c.encode(0x0F),
        h("09 00 | 0F 00 | 80 | 00 00 | A7 00 07 01")
    );
}
