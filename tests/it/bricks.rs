//! Integration tests: two bricks, one verdict. `cubot bench bricks` runs the same seeded
//! job on cubot's simulated brick and on LEGO's firmware brick and compares the two
//! exchanges, the host's decisions and the outcomes: every status, every value that is no
//! measurement, every program record, command for command, and the host's decisions
//! (it acts on what it measured, so where the two motor models measure too differently
//! its paths would part: see `job::bricks`).

use super::support::{cubot, firmware_brick, stdout};

/// The job's line and the summary line of one seeded job on both bricks.
fn verdict(seed: &str, size: &str) -> (serde_json::Value, serde_json::Value) {
    let dir = firmware_brick().expect("checked by the caller");
    let dir = dir.to_string_lossy().to_string();
    let o = cubot(&[
        "bench",
        "bricks",
        "--runs",
        "1",
        "--seed",
        seed,
        "--size",
        size,
        "--latency",
        "60",
        "--speed",
        "4",
        "--lms2012",
        &dir,
        "--json",
    ]);
    let out = stdout(&o);
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON Lines"))
        .collect();
    let one = lines
        .iter()
        .find(|v| v["type"] == "bench-bricks-one")
        .unwrap_or_else(|| panic!("no job line: {out}"));
    assert!(one.get("error").is_none(), "{one}");
    let last = lines.last().expect("a summary line");
    assert_eq!(last["type"], "bench-bricks", "{out}");
    assert_eq!(
        last["logic_before_parting"],
        0,
        "logic differences between the bricks before the host's paths part: {}",
        serde_json::to_string_pretty(&one["exchange"]["logic"]).unwrap_or_default()
    );
    // Exit 0: no logic difference at all; 1: the host's paths parted.
    assert!(matches!(o.status.code(), Some(0 | 1)), "{out}");
    // The scan ran alike on both: the paths, if they part, part after its programs.
    let parted = &one["exchange"]["parted"];
    if !parted.is_null() {
        let at = parted[0].as_u64().or(parted[1].as_u64()).unwrap_or(0);
        assert!(
            at >= 15,
            "the paths part at step {at}, before the scan's end: {out}"
        );
    }
    // Physical differences are measured, kind by kind: counts were compared.
    assert!(
        last["physical"]["count"]["n"].as_u64().unwrap_or(0) > 0,
        "{out}"
    );
    (one.clone(), last.clone())
}

/// What the two bricks must agree on. On a quiet machine that is the whole job: every
/// reply, every decision, the outcome. On a loaded one the firmware brick can fall behind
/// the speed asked of it, and the host's stall checks (timed on the host's clock) then
/// finish a move by polling it: the host's path parts on a measurement, after the scan,
/// with no logic difference before (checked in `verdict`), and both cubes still end at
/// the target.
fn assert_agree(one: &serde_json::Value, summary: &serde_json::Value) {
    if summary["parted"] == 0 {
        assert_eq!(summary["logic_differences"], 0, "{summary}");
    }
    assert_eq!(
        one["simulator_at_target"],
        serde_json::json!([true, true]),
        "{one}"
    );
}

#[test]
fn both_bricks_agree_in_logic_on_a_seeded_3x3x3_job() {
    if firmware_brick().is_none() {
        return;
    }
    let (one, summary) = verdict("2", "3");
    assert_agree(&one, &summary);
}

#[test]
fn both_bricks_agree_in_logic_on_a_seeded_2x2x2_job() {
    if firmware_brick().is_none() {
        return;
    }
    let (one, summary) = verdict("3", "2");
    assert_agree(&one, &summary);
}

#[test]
fn bench_bricks_without_a_firmware_build_is_refused_before_any_work() {
    let empty = tempfile::tempdir().unwrap();
    let o = cubot(&[
        "bench",
        "bricks",
        "--runs",
        "1",
        "--lms2012",
        empty.path().to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(
        out.lines().all(|l| l.starts_with("host:")),
        "only the host line, no table of nothing: {out}"
    );
    let err = super::support::stderr(&o);
    assert!(
        err.contains("no firmware brick is built") && err.contains("scripts/firmware-brick.sh"),
        "{err}"
    );
}
