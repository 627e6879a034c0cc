use super::*;
use crate::robot::ev3::protocol::{encode_reply, Cmp, DirectCommand, OutputPort, Program, Width};

fn traffic(cmd: &DirectCommand, counter: u16, globals: &[u8], at: f64) -> Vec<(f64, Traffic)> {
    vec![
        (at, Traffic::Host(cmd.encode(counter))),
        (
            at + 0.1,
            Traffic::Robot(encode_reply(counter, true, globals)),
        ),
    ]
}

#[test]
fn a_direct_commands_values_are_classified_by_the_table() {
    let mut c = DirectCommand::new();
    let busy = c.output_test(1);
    let count = c.output_get_count(OutputPort::A);
    let (typ, _) = c.get_typemode(1);
    let mut g = [0u8; 12];
    g[busy.offset] = 1;
    g[count.offset..count.offset + 4].copy_from_slice(&(-42i32).to_le_bytes());
    g[typ.offset] = 29;
    let t = turns(&traffic(&c, 7, &g[..c.global], 1.0));
    assert_eq!(t.len(), 1);
    assert_eq!(t[0].status, Some(super::super::DIRECT_REPLY));
    assert_eq!(t[0].answered, Some(1.1));
    let by = |o: usize| t[0].fields.iter().find(|f| f.offset == o).unwrap();
    assert_eq!(by(busy.offset).class, Class::Value);
    assert_eq!(by(busy.offset).value, Val::Int(1));
    assert_eq!(by(count.offset).class, Class::Physical(Measure::Count));
    assert_eq!(by(count.offset).value, Val::Int(-42));
    assert_eq!(by(typ.offset).value, Val::Int(29));
}

#[test]
fn in_a_program_measurements_flow_and_constants_are_records() {
    let mut p = Program::new();
    let stage = p.global(Width::B1);
    let count = p.global(Width::B4);
    let moved = p.global(Width::B4);
    let start = p.local(Width::B4);
    let top = p.label();
    p.get_count(OutputPort::B, start);
    p.mov(Width::B1, Width::B1, 3, stage);
    p.bind(top);
    p.get_count(OutputPort::B, count);
    p.sub(Width::B4, count, start, moved);
    p.jr_if(Cmp::Lt, Width::B4, moved, 90, top);
    let cmd = p.finish().unwrap();
    let mut g = vec![0u8; cmd.global];
    g[stage.global_offset().unwrap()] = 3;
    let t = turns(&traffic(&cmd, 1, &g, 0.0));
    assert!(t[0].program);
    let class = |v: crate::robot::ev3::protocol::Var| {
        let o = v.global_offset().unwrap();
        t[0].fields.iter().find(|f| f.offset == o).unwrap().class
    };
    assert_eq!(class(stage), Class::Record);
    assert_eq!(class(count), Class::Physical(Measure::Count));
    assert_eq!(
        class(moved),
        Class::Physical(Measure::Count),
        "computed from a count"
    );
}

#[test]
fn polls_collapse_and_only_logic_differs_as_logic() {
    let mut c = DirectCommand::new();
    c.output_test(1);
    let mut g = DirectCommand::new();
    let count = g.output_get_count(OutputPort::A);
    let n = |v: i32| {
        let mut b = vec![0u8; 4];
        b[count.offset..count.offset + 4].copy_from_slice(&v.to_le_bytes());
        b
    };
    // A polls three times, B once; their counts differ by 5 degrees.
    let mut a = Vec::new();
    for (k, busy) in [1u8, 1, 0].iter().enumerate() {
        a.extend(traffic(&c, k as u16, &[*busy], k as f64));
    }
    a.extend(traffic(&g, 9, &n(100), 5.0));
    let mut b = traffic(&c, 0, &[0], 0.0);
    b.extend(traffic(&g, 9, &n(95), 4.0));
    let cmp = compare(&turns(&a), &turns(&b), &Tolerances::default());
    assert!(cmp.logic.is_empty(), "{:?}", cmp.logic);
    assert_eq!(cmp.steps, (2, 2));
    assert_eq!(cmp.physical["repeats"].max, 2.0);
    assert_eq!(cmp.physical["count"].max, 5.0);
    // A poll that ends on a different busy flag is logic; so is a command sent to one only.
    let mut b2 = traffic(&c, 0, &[1], 0.0);
    b2.extend(traffic(&g, 9, &n(100), 4.0));
    b2.extend(traffic(&g.clone(), 10, &n(100), 4.5));
    let mut led = DirectCommand::no_reply();
    led.led(1);
    b2.extend(traffic(&led, 11, &[], 6.0));
    let cmp = compare(&turns(&a), &turns(&b2), &Tolerances::default());
    let whats: Vec<&str> = cmp.logic.iter().map(|d| d.what.as_str()).collect();
    assert_eq!(
        whats,
        ["value OUTPUT_TEST@0", "a command only one brick was sent"],
        "{:?}",
        cmp.logic
    );
    assert_eq!(cmp.logic_before_parting, 1);
    assert_eq!(cmp.parted, Some((None, Some(2))));
}

#[test]
fn a_record_of_words_takes_each_words_class_from_its_write() {
    // Records of (reading, count): the reading from the sensor, the count from motor A.
    let mut p = Program::new();
    let recs = p.global_array(Width::B4, 4);
    let (rgb, cnt, idx) = (p.local(Width::B4), p.local(Width::B4), p.local(Width::B1));
    p.ready_raw(1, 0, 4, &[rgb]);
    p.get_count(OutputPort::A, cnt);
    p.mov(Width::B1, Width::B1, 0, idx);
    for w in [rgb, cnt] {
        p.write_index(Width::B4, w, idx, recs);
        p.add(Width::B1, idx, 1, idx);
    }
    let cmd = p.finish().unwrap();
    let t = turns(&traffic(&cmd, 1, &vec![0u8; cmd.global], 0.0));
    let classes: Vec<Class> = t[0].fields.iter().map(|f| f.class).collect();
    let (s, c) = (
        Class::Physical(Measure::Sensor),
        Class::Physical(Measure::Count),
    );
    assert_eq!(classes, [s, c, s, c]);
}

/// A program that keeps a motor's target (a constant the host computed) in a table, as the
/// wait routine does, and stamps a stage from a constant of its own.
fn target_table(target: i32) -> (DirectCommand, usize, usize) {
    let mut p = Program::new();
    let stage = p.global(Width::B4);
    let targets = p.global_array(Width::B4, 2);
    let (mt, no) = (p.local(Width::B4), p.local(Width::B1));
    let top = p.label();
    p.mov(Width::B4, Width::B4, 2, stage);
    p.mov(Width::B4, Width::B4, target, mt);
    p.mov(Width::B1, Width::B1, 1, no);
    p.bind(top);
    p.write_index(Width::B4, mt, no, targets);
    p.jr_if(Cmp::Lt, Width::B1, no, 0, top);
    let cmd = p.finish().unwrap();
    let (s, t) = (
        stage.global_offset().unwrap(),
        targets.word(1).global_offset().unwrap(),
    );
    (cmd, s, t)
}

fn replied(cmd: &DirectCommand, words: &[(usize, i32)]) -> Vec<Turn> {
    let mut g = vec![0u8; cmd.global];
    for &(o, v) in words {
        g[o..o + 4].copy_from_slice(&v.to_le_bytes());
    }
    turns(&traffic(cmd, 1, &g, 0.0))
}

#[test]
fn a_record_of_the_hosts_constants_differs_only_with_them() {
    // The host computed 400 for one brick and 460 for the other: the echo is their
    // difference, not logic.
    let (a, stage, target) = target_table(400);
    let (b, _, _) = target_table(460);
    let ta = replied(&a, &[(stage, 2), (target, 400)]);
    let tb = replied(&b, &[(stage, 2), (target, 460)]);
    let f = ta[0].fields.iter().find(|f| f.offset == target).unwrap();
    assert_eq!(f.class, Class::Record);
    assert!(!f.args.is_empty(), "{f:?}");
    let cmp = compare(&ta, &tb, &Tolerances::default());
    assert!(cmp.logic.is_empty(), "{:?}", cmp.logic);
    assert_eq!(cmp.physical["argument"].max, 60.0);
    // The same constants and a different echo, or a different stage: logic.
    let tc = replied(&a, &[(stage, 2), (target, 401)]);
    let cmp = compare(&ta, &tc, &Tolerances::default());
    assert_eq!(cmp.logic.len(), 1, "{:?}", cmp.logic);
    let td = replied(&b, &[(stage, 3), (target, 460)]);
    let cmp = compare(&ta, &td, &Tolerances::default());
    assert_eq!(cmp.logic.len(), 1, "{:?}", cmp.logic);
    assert!(cmp.logic[0].what.starts_with("record"), "{:?}", cmp.logic);
}

#[test]
fn a_byte_no_operation_writes_keeps_the_class_of_what_was_left_there() {
    // A count at 0..4, then a poll whose reply has a padding byte at 1..3 (a busy flag at
    // 0, a count at 4): the padding holds what the count left.
    let mut first = DirectCommand::new();
    let count = first.output_get_count(OutputPort::A);
    assert_eq!(count.offset, 0);
    let mut poll = DirectCommand::new();
    poll.output_test(1);
    poll.output_get_count(OutputPort::A);
    let mut traffic_ = traffic(&first, 1, &(-500i32).to_le_bytes(), 0.0);
    let mut g = vec![0u8; poll.global];
    g[..4].copy_from_slice(&(-500i32).to_le_bytes());
    g[0] = 0;
    traffic_.extend(traffic(&poll, 2, &g, 1.0));
    let t = turns(&traffic_);
    let pad = t[1].fields.iter().find(|f| f.offset == 1).unwrap();
    assert!(pad.name.starts_with("unwritten@"), "{pad:?}");
    assert_eq!(pad.class, Class::Physical(Measure::Count));
    // Never written since the connection: a value.
    let t = turns(&traffic(&poll, 2, &g, 1.0));
    let pad = t[0].fields.iter().find(|f| f.offset == 1).unwrap();
    assert_eq!(pad.class, Class::Value);
}

#[test]
fn the_microsecond_clock_is_its_own_kind_and_the_millisecond_one_is_time() {
    let mut c = DirectCommand::new();
    let us = c.timer_read_us();
    let mut g = vec![0u8; c.global];
    g[us.offset..us.offset + 4].copy_from_slice(&1_234_567i32.to_le_bytes());
    let t = turns(&traffic(&c, 3, &g, 0.0));
    let f = t[0].fields.iter().find(|f| f.offset == us.offset).unwrap();
    assert_eq!(f.class, Class::Physical(Measure::Microseconds));
    assert_eq!(Measure::Microseconds.name(), "time-us");
    assert_eq!(Tolerances::default().of("time-us"), 2_000_000.0);
    let mut p = Program::new();
    let ms = p.global(Width::B4);
    p.timer_read(ms);
    let cmd = p.finish().unwrap();
    let t = turns(&traffic(&cmd, 4, &vec![0u8; cmd.global], 0.0));
    let o = ms.global_offset().unwrap();
    let f = t[0].fields.iter().find(|f| f.offset == o).unwrap();
    assert_eq!(f.class, Class::Physical(Measure::Time));
}
