//! Tests of the table, its walk and the validator.

use super::super::from_hex as h;
use super::*;
/// What the validator says of `ops`: `Ok` when it runs them.
fn verdict(ops: &str) -> Result<(), String> {
    let w = walk(&h(ops));
    if let Some(e) = w.error {
        return Err(e.to_string());
    }
    match validate(&w.instrs).first() {
        Some(v) => Err(v.to_string()),
        None => Ok(()),
    }
}

#[test]
fn every_entry_is_one_operation_with_its_values_last() {
    for (n, a) in OPS.iter().enumerate() {
        assert!(
            OPS[n + 1..]
                .iter()
                .all(|b| (b.code, b.sub) != (a.code, a.sub)),
            "{} twice",
            a.name
        );
        assert!(OPS
            .iter()
            .all(|b| b.code != a.code || b.sub.is_some() == a.sub.is_some()));
        if a.values.is_some() {
            assert_eq!(a.params.last().map(|p| p.role), Some(Role::Values));
        }
        // The firmware's sub-codes are DATA8 constants.
        assert!(a.sub.is_none_or(|s| s <= 127));
    }
}

#[test]
fn a_command_walks_into_its_operations_and_values() {
    // E6 and E13 of the codec's worked examples (READY_RAW's three values; a float
    // read and OUTPUT_TEST).
    let w = walk(&h("99 1C 00 01 1D 04 03 60 64 68 | A9 00 07 6C"));
    assert_eq!(w.error, None);
    let [ready, test] = &w.instrs[..] else {
        panic!("{w:?}")
    };
    assert_eq!(ready.op.name, "INPUT_DEVICE READY_RAW");
    assert_eq!((ready.at, ready.end), (0, 10));
    assert_eq!(ready.args.len(), 8);
    let values: Vec<_> = ready.values().iter().map(|a| a.param.clone()).collect();
    assert_eq!(
        values,
        vec![Param::Global(0), Param::Global(4), Param::Global(8)]
    );
    assert!(ready.values().iter().all(|a| a.par == out(Kind::D32)));
    assert_eq!(test.op.name, "OUTPUT_TEST");
    assert_eq!(test.args[2].param, Param::Global(12));
    assert_eq!((test.args[2].at, test.args[2].end), (13, 14));
}

#[test]
fn the_walk_stops_where_the_table_ends() {
    let w = walk(&h("01 FE 01"));
    assert_eq!(w.instrs.len(), 1);
    assert_eq!(
        w.error,
        Some(WalkError::Unknown {
            at: 1,
            code: 0xFE,
            sub: None
        })
    );
    // A sub-code the table does not hold; one given as a variable.
    assert!(matches!(
        walk(&h("99 1F")).error,
        Some(WalkError::Unknown {
            sub: Some(0x1F),
            ..
        })
    ));
    assert!(matches!(
        walk(&h("99 60")).error,
        Some(WalkError::SubCode { .. })
    ));
    // A parameter cut short; VALUES as a variable.
    assert!(matches!(
        walk(&h("B3 00 02")).error,
        Some(WalkError::Param { index: 3, .. })
    ));
    assert!(matches!(
        walk(&h("99 1C 00 01 1D 04 60 60")).error,
        Some(WalkError::Values { .. })
    ));
}

/// Cases the firmware's validator decides (`validate.c`, as the module docs read it).
#[test]
fn the_validator_refuses_what_the_firmware_refuses() {
    let runs = [
        "01",
        "30 05 60",
        // DATA8 −127 first; −128 as a DATA32 (a constant is checked by value).
        "30 81 81 60",
        "3A 81 80 64",
        // DATA32 −(2^31 − 1) first.
        "3A 83 01 00 00 80 64",
        // Later parameters' constants are not refused: BRAKE −128, SPEED −128, a step
        // of i32::MIN, FREQ −32768, LAYER −128 after a sub-code.
        "A3 00 0F 81 80",
        "AE 00 02 81 80 1E 82 D2 00 1E 01",
        "AE 00 02 81 28 1E 83 00 00 00 80 1E 01",
        "94 01 02 82 00 80 82 10 00",
        "99 1C 81 80 01 1D 04 01 60",
        "1A 00 83 00 00 00 80 60",
        // READY_RAW's values at unaligned offsets are not checked.
        "99 1C 00 01 1D 04 03 61 65 69",
        // DATA8 outputs anywhere.
        "99 05 00 10 61 62",
        // No direction check: a constant output.
        "B3 00 02 00",
    ];
    for ops in runs {
        assert_eq!(verdict(ops), Ok(()), "{ops}");
    }
    let refused = [
        // The lowest value of the first parameter's kind.
        "30 81 80 60",
        "32 81 80 64",
        "3A 83 00 00 00 80 64",
        "40 83 00 00 00 80",
        "A3 81 80 0F 00",
        "1A 83 00 00 00 80 00 60",
        // −32768 and −32767 as a first DATA8.
        "31 82 00 80 62",
        "31 82 01 80 62",
        // DATA32 variables at offsets not divisible by 4, inputs too, local too.
        "3A 05 61",
        "3A 05 62",
        "3A 61 64",
        "3A E1 05 64",
        "3A 05 C1 02",
        "85 05 61",
        // A DATAF output.
        "81 01 61",
    ];
    for ops in refused {
        assert!(verdict(ops).is_err(), "{ops}");
    }
}
