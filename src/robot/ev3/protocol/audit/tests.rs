//! Tests of the wire audit: every rule fires on its mistake, the worked examples and
//! every builder of the encoder pass.

use super::super::{encode_reply, from_hex as h, DirectCommand, OutputPort};
use super::*;

fn rules(a: &Audit) -> Vec<&'static str> {
    a.violations.iter().map(|v| v.rule).collect()
}

/// Host sends `cmd`, the brick answers `reply`; returns the rules broken.
fn exchange(cmd: &str, reply: Option<&str>) -> Vec<&'static str> {
    let mut a = Audit::new();
    a.host(&h(cmd));
    if let Some(r) = reply {
        a.brick(&h(r));
    }
    a.finish();
    rules(&a)
}

#[test]
fn programs_jump_to_operations_only() {
    // P1 of "Programs on the brick": clean, though it writes LV0 twice.
    let p1 = "12 00 10 00 00 00 10 3A 05 40 16 40 01 40 6A 40 00 82 F6 FF";
    assert!(exchange(p1, Some("03 00 10 00 02")).is_empty());
    // The same jump one byte short: into the middle of MOVE32_32.
    let bad = "12 00 10 00 00 00 10 3A 05 40 16 40 01 40 6A 40 00 82 F5 FF";
    assert_eq!(exchange(bad, Some("03 00 10 00 02")), vec!["jump"]);
    // READ32 from a constant "array".
    let r = "09 00 11 00 00 04 00 CA 05 00 60";
    assert_eq!(
        exchange(r, Some("07 00 11 00 02 00 00 00 00")),
        vec!["array"]
    );
}

#[test]
fn the_worked_examples_are_clean() {
    let cases: &[(&str, Option<&str>)] = &[
        ("06 00 2A 00 00 00 00 01", Some("03 00 2A 00 02")),
        ("08 00 2B 00 80 00 00 82 1B 05", None),
        (
            "13 00 01 00 00 00 00 AE 00 02 81 28 1E 82 D2 00 1E 01 AA 00 02",
            Some("03 00 01 00 02"),
        ),
        (
            "09 00 04 00 00 01 00 A9 00 03 60",
            Some("04 00 04 00 02 01"),
        ),
        (
            "0F 00 03 00 00 0C 00 99 1C 00 01 1D 04 03 60 64 68",
            Some("0F 00 03 00 02 FD 00 00 00 24 01 00 00 B7 00 00 00"),
        ),
        (
            "0D 00 06 00 00 04 00 99 1D 00 10 07 00 01 60",
            Some("07 00 06 00 02 00 00 04 C2"),
        ),
        (
            "09 00 05 00 00 04 00 B3 00 02 60",
            Some("07 00 05 00 02 0E 01 00 00"),
        ),
        ("09 00 07 00 80 00 00 A3 00 0F 00", None),
        (
            "15 00 09 00 80 00 00 AF 00 04 81 32 81 64 82 F4 01 81 64 00 A6 00 04",
            None,
        ),
        (
            "0E 00 0B 00 00 04 00 99 1D 00 00 81 21 00 01 60",
            Some("07 00 0B 00 02 00 00 D0 41"),
        ),
        (
            "0A 00 0D 00 00 08 00 A8 00 01 60 64",
            Some("0B 00 0D 00 02 00 00 00 00 0E 01 00 00"),
        ),
    ];
    for (cmd, reply) in cases {
        assert_eq!(exchange(cmd, *reply), Vec::<&str>::new(), "{cmd}");
    }
}

#[test]
fn every_rule_fires_on_its_mistake() {
    let cases: &[(&str, Option<&str>, &str)] = &[
        // A bit field where OUTPUT_GET_COUNT takes a number (motor C = 4 as NOS).
        (
            "09 00 05 00 00 04 00 B3 00 04 60",
            Some("07 00 05 00 02 00 00 00 00"),
            "port",
        ),
        // A number where OUTPUT_TEST takes a bit field: NOS 0 selects nothing.
        (
            "09 00 04 00 00 01 00 A9 00 00 60",
            Some("04 00 04 00 02 00"),
            "port",
        ),
        // Layer 1.
        ("09 00 07 00 80 00 00 A3 01 0F 00", None, "layer"),
        // An output given as a constant.
        (
            "09 00 05 00 00 04 00 B3 00 02 00",
            Some("07 00 05 00 02 00 00 00 00"),
            "encoding",
        ),
        // An output beyond the header's global memory.
        (
            "09 00 05 00 00 02 00 B3 00 02 60",
            Some("05 00 05 00 02 00 00"),
            "memory",
        ),
        // A DATA32 output at offset 1: the firmware's validator refuses the command.
        (
            "09 00 05 00 00 08 00 B3 00 02 61",
            Some("0B 00 05 00 02 00 00 00 00 00 00 00 00"),
            "validator",
        ),
        // A DATA32 input at offset 2 (local): refused too.
        (
            "09 00 05 00 00 00 18 3A C1 02 40",
            Some("03 00 05 00 02"),
            "validator",
        ),
        // DATA8's lowest value as an operation's first parameter: refused.
        ("0A 00 07 00 80 00 00 A3 81 80 0F 00", None, "validator"),
        // ... as a later one: the brick runs it, the audit does not take it.
        ("0A 00 07 00 80 00 00 A3 00 0F 81 80", None, "encoding"),
        // DATA32's lowest value as a step (a later parameter).
        (
            "15 00 01 00 00 00 00 AE 00 02 81 28 1E 83 00 00 00 80 1E 01 A6 00 02",
            Some("03 00 01 00 02"),
            "encoding",
        ),
        // READY_RAW's values at offsets the validator does not check.
        (
            "0F 00 03 00 00 0D 00 99 1C 00 01 1D 04 03 61 65 69",
            Some("10 00 03 00 02 00 00 00 00 00 00 00 00 00 00 00 00 00"),
            "alignment",
        ),
        // Speed 120.
        (
            "13 00 01 00 00 00 00 AE 00 02 81 78 1E 82 D2 00 1E 01 A6 00 02",
            Some("03 00 01 00 02"),
            "value",
        ),
        // A step job of no steps.
        (
            "0F 00 01 00 00 00 00 AE 00 02 81 28 00 00 00 01 A6 00 02",
            Some("03 00 01 00 02"),
            "value",
        ),
        // An unknown opcode.
        ("06 00 77 00 00 00 00 FE", Some("03 00 77 00 02"), "opcode"),
        // A reply of the wrong size.
        (
            "09 00 05 00 00 04 00 B3 00 02 60",
            Some("03 00 05 00 02"),
            "reply-size",
        ),
        // A reply to a counter nobody asked.
        ("06 00 2A 00 00 00 00 01", Some("03 00 2B 00 02"), "counter"),
        // A reply to a no-reply command.
        ("06 00 2A 00 80 00 00 01", Some("03 00 2A 00 02"), "counter"),
        // An error reply.
        ("06 00 2A 00 00 00 00 01", Some("03 00 2A 00 04"), "reply"),
        // No reply at all.
        ("06 00 2A 00 00 00 00 01", None, "unanswered"),
        // A string that does not end within its slot.
        (
            "09 00 01 00 00 04 00 D3 0D 04 60",
            Some("07 00 01 00 02 45 56 33 34"),
            "string",
        ),
        // A string output with LENGTH -1 (no check).
        (
            "09 00 01 00 00 04 00 D3 0D 3F 60",
            Some("07 00 01 00 02 45 56 33 00"),
            "string",
        ),
        // A system command.
        ("04 00 2A 00 01 9D", None, "type"),
    ];
    for (cmd, reply, rule) in cases {
        let got = exchange(cmd, *reply);
        assert!(got.contains(rule), "{cmd}: expected [{rule}], got {got:?}");
    }
    // Two commands in flight; a reused counter.
    let mut a = Audit::new();
    a.host(&h("06 00 2A 00 00 00 00 01"));
    a.host(&h("06 00 2A 00 00 00 00 01"));
    let r = rules(&a);
    assert!(r.contains(&"in-flight") && r.contains(&"counter"), "{r:?}");
    // Two outputs on the same bytes.
    let mut a = Audit::new();
    a.host(&h("0D 00 05 00 00 04 00 B3 00 02 60 B3 00 01 60"));
    assert_eq!(rules(&a), vec!["overlap"]);
}

#[test]
fn the_encoder_passes_for_every_builder_and_chunking() {
    let mut a = Audit::new();
    let mut counter = 0;
    let mut send = |a: &mut Audit, c: &DirectCommand, chunk: usize| {
        counter += 1;
        let bytes = c.encode(counter);
        for part in bytes.chunks(chunk) {
            a.host(part);
        }
        if c.reply {
            let r = encode_reply(counter, true, &vec![0; c.global]);
            for part in r.chunks(chunk) {
                a.brick(part);
            }
        }
    };
    let mut c = DirectCommand::new();
    c.nop().led(3).tone(20, 880, 150);
    send(&mut a, &c, 1);
    let mut c = DirectCommand::new();
    c.brick_name(32);
    c.firmware_version(16);
    c.hardware_version(8);
    c.battery_volts();
    c.battery_level();
    c.output_polarity(7, 1);
    send(&mut a, &c, 5);
    let mut c = DirectCommand::new();
    c.output_get_count(OutputPort::D);
    c.output_read(OutputPort::A);
    c.output_test(0x0F);
    c.get_typemode(19);
    c.ready_raw(1, 29, 4, 3);
    c.ready_si(16, 7, 0, 1);
    send(&mut a, &c, 3);
    let mut c = DirectCommand::no_reply();
    c.output_reset(2)
        .step_speed(2, -40, [30, 210, 30], true)
        .time_power(4, 50, [100, 500, 100], false)
        .output_speed(1, -25)
        .output_start(7)
        .output_stop(15, false)
        .output_clr_count(2);
    send(&mut a, &c, 7);
    a.finish();
    assert!(a.clean(), "{:?}", a.violations);
    assert_eq!(a.stats.commands, 4);
    assert_eq!(a.stats.replies, 3);
    assert_eq!(a.stats.ops["OUTPUT_GET_COUNT"], 1);
}
