//! The MindCub3r: David Gilday's LEGO MINDSTORMS EV3 Rubik's-cube robot, driven from the
//! host over EV3 direct commands. This module holds its geometry and primitives, the
//! machine on top of the EV3 driver, the motion planner and the scan's facelet frames.
//!
//! Level: robot (uses `cube`, `solver` (the planner's costed search), `color::raw`, the
//! EV3 driver of [`crate::robot::ev3`] and [`crate::robot::symmetry`]). Must not depend on
//! the line robot, the simulators, `job` or `cli`. No printing.
//!
//! The values a user tunes (ports, angles, speeds, time-outs, timings) live in
//! `calibration/mindcub3r.toml`; the defaults in the code equal that file.
//!
//! ## Sources
//!
//! The official MindCub3r program (mindcuber.com) is not open source. What follows comes
//! from open re-implementations compared against each other: the ev3dev MindCub3r demo
//! (`ev3dev/ev3dev-lang-python-demo`, `robots/MINDCUB3R/mindcuber.py`, after
//! `cavenel/ev3dev_examples`), the direct-command ports `Steve-Zheng/mindcuber-python-ev3`
//! and `Pedro-Beirao/mindcuber-python`, and a pybricks port by Quirin Möller and Jakob
//! Schönlinner. Where they disagree, the numbers are calibration values. Angles are
//! *motor* degrees unless a table angle is named.
//!
//! ## The machine
//!
//! ```text
//!   side view, from the robot's Right
//!
//!     colour-sensor arm (C)                  tilt arm (A)
//!     -------------[S]                       away: clear of the cube
//!                   |                        hold: presses the upper two layers
//!                   v                 ___    apex: pulls the cube over the Back edge
//!               +---------+ _________/
//!    Front      |   Top   |                  Back
//!               |  cube   |
//!               +---------+
//!      ========== tray ==========
//!      turntable (B): 12T -> 36T, 3:1
//! ```
//!
//! | Part | Port (default) | Device | Notes |
//! |------|----------------|--------|-------|
//! | tilt/hold arm | A | large motor (type 7) | homed against its retracted stop; turns about 1:1 |
//! | turntable | B | large motor (type 7) | 3:1 gearing: 1080 motor° per revolution, 270° per quarter turn, 135° per 45°; no end stop |
//! | colour-sensor arm | C | medium motor (type 8) | homed against its parked stop; negative = inwards |
//! | colour sensor | sensor port 2 (1 in some builds) | colour sensor (type 29) | read in RGB-RAW (mode 4) |
//!
//! Builds differ in their ports, so every port is configurable and checked with
//! GET_TYPEMODE at start-up. The gear ratio is a calibration value too: the mindcuber.com
//! troubleshooting page warns that the Education variant's turntable gearing differs from
//! the home set's (the warning is on the NXT page; for the EV3 build it is not confirmed).
//!
//! ## Robot frame
//!
//! The six robot positions are fixed in the robot; cube faces move between them. The
//! robot frame is a cube frame: Top = U, Right = R, Front = F, Bottom = D, Left = L,
//! Back = B, where *Back* is the position whose face goes to the bottom when the arm tilts
//! the cube (read off the demo's orientation bookkeeping; physically the side the arm
//! pulls towards). An orientation stores which cube face is at each position, in URFDLB
//! order. Turntable `+` is the direction that turns the cube clockwise seen from above
//! (`y`); which way the motor must run for that is the calibration's `turntable.sign`.
//!
//! ## Primitives
//!
//! | Primitive | Needs | Motors | Move in the robot frame |
//! |-----------|-------|--------|-------------------------|
//! | `ArmAway` | — | A to away | — |
//! | `ArmHold` | — | A to hold | — |
//! | `Tilt` | arm at hold, sensor arm at clear | A: hold → apex → hold | `x`: Front → Top → Back → Bottom → Front |
//! | `Spin(k)`, k = ±1, ±2 | arm away | B: 270·k | `y^k` (+1: Right → Front → Left → Back → Right) |
//! | `Turn(k)`, k = ±1, ±2 | arm at hold, sensor arm at clear | B: 270·k, over-rotated and back | +1 = `D'`, −1 = `D`, ±2 = `D2` |
//! | `Sensor(p)` | arm away for corner, edge, centre | C to p | — |
//! | `Read` | sensor over a sticker | RGB-RAW | — |
//!
//! Only the bottom layer can turn and the tilt goes one way only, so every face turn first
//! brings its face to the bottom (none, one or two tilts, perhaps a spin). The machine moves
//! the arms itself where a primitive's precondition needs it.
//!
//! ## Turntable
//!
//! Table targets are computed from the count read at start-up and an exact table angle,
//! `zero + round(angle · ratio · sign)`, so errors do not pile up over many moves (the demo
//! reaches the same end by rounding each target to the 45° grid).
//!
//! ## Over-rotation
//!
//! A held bottom layer turned exactly to the quarter is left slightly out of square (the
//! tray has play; the sources do not say why, this is the presumed reason), and the next
//! tilt can jam. Every open port that turns layers over-rotates and comes back: the demo
//! goes 18 motor° (6° of table) past the target at turning speed, then back at a quarter
//! of that speed; the direct-command ports go −310 then +40 for a quarter turn. Defaults
//! here: `over_rotation = 18` at `turn_speed`, back at `over_rotation_speed = 15` % with no
//! ramps. Spins do not over-rotate.
//!
//! ## Angles
//!
//! | Motor | Position | Default | Open ports |
//! |-------|----------|---------|------------|
//! | A | away | 20 | 0 to 20 |
//! | A | clear of the cube (the turntable may turn below it) | 35 | 35 (demo) |
//! | A | hold | 100 | 85 (demo) to 100 (direct-command ports) |
//! | A | tilt apex | 190 | 180 to 195 |
//! | C | parked | 0 | 0 |
//! | C | clear of the tilt arm | −400 | −400 |
//! | C | centre | −750 | −750 |
//! | C | edges, at table 90°, 180°, 270°, 360° | −655, −655, −650, −645 | −630 to −680 |
//! | C | corners, at table 45°, 135°, 225°, 315° | −595, −600, −600, −590 | −580 to −610 |
//!
//! Edges and corners have one value per sample because the arm swings on an arc and the
//! cube sits a little off centre in the tray.
//!
//! ## Speeds
//!
//! Percent of full speed (1050 °/s large, 1560 °/s medium); the ports run their motors at
//! 300–600 °/s for reliability. Defaults: arm 35 (away ↔ hold), 40 up to the apex, 40 back
//! with the ramp-down (50°) doubled (with a broken ramp-down the demo's tilts were reported
//! too aggressive, ev3dev-lang-python PR #173), homing −25; turntable 55 for spins and
//! turns, 70 for the scanning revolution (see [Scan on the brick](#scan-on-the-brick));
//! sensor arm 75, homing +30.
//!
//! The arm's figures come from running the programs on LEGO's own firmware (the firmware
//! brick, [`crate::robot::sim::lms2012`]), whose motor driver behaves in three ways that
//! matter here:
//!
//! * **A move ends at its count, still running.** `d_pwm` ramps down linearly in counts,
//!   but the motor cannot shed speed that fast: a move at 45 % reached its count at about
//!   50 % of full speed, ran 15–25° past it and was braked back. Arm moves are slower and
//!   ramp down over 50°, and `away` sits 20° off the homed stop so that the overshoot
//!   does not strike it.
//! * **Above 35 % of full speed the count does not read the direction pin** (`d_pwm.c`,
//!   the tacho interrupts): it counts on in the last direction. A brake that reverses a
//!   fast overshoot within a few milliseconds makes the count slip by the bounce — 20°
//!   a time on the firmware brick with the old speeds, after which `hold` was 20° high and
//!   the arm struck the cube. Slower arrivals keep the brake's pull-back gentle.
//! * **Rest is not the end of a job.** After each arm move the machine waits until the
//!   count stands still over `settle_ms` (at least 20 ms) instead of a fixed pause: a tilt
//!   started while the arm still rises from its overshoot strikes the cube. Moves sent
//!   from the host (a resume, a re-read of single stickers, the step commands) follow the
//!   same rule for the arm and the turntable, whose next move is relative to the count
//!   read before it, and judge a stall by the brick's clock: LEGO's regulation starts a
//!   motor from rest slowly, and a brick that lags its host (the firmware brick on a
//!   loaded machine) read those starts as stalls by the host's clock (see
//!   [Whose clock](crate::robot::ev3::driver::motion#whose-clock)).
//!
//! ## Timings
//!
//! The planner prices primitives in seconds (`Timings`, `[timings]` of the calibration):
//! each primitive's time on a link without latency, plus the link round trips it waits for
//! times the link's round trip. Run from the host, a move is a command that starts it, the
//! motion, and the poll that finds it ended, each a round trip the motion does not hide,
//! so a tilt (two arm moves) waited for about 2.4 round trips and a layer turn
//! (over-rotation and back) for about 2.9. Run in chunks on the brick
//! ([Execution on the brick](#execution-on-the-brick)), a chunk of a few primitives
//! waits for one, and none when it answers while its last tilt or turn still settles: tilts
//! and layer turns, which end most chunks, wait for almost none, spins and arm moves for
//! about half of one. A connected robot's round trip is
//! measured at connect (the median of three pings), so the same calibration prices a USB
//! link and a 60 ms Bluetooth link each as it is.
//!
//! `cubot robot calibrate-timings` measures them: it executes the plans of seeded random
//! cubes as runs do and times every primitive (so each primitive's mean holds the contexts
//! runs meet: the arm's position, the overlaps, the settle pause): run from the host, from
//! the command that starts it to the reply that confirms it; in chunks, by the brick's
//! clock (a last move that settles after the chunk answered counts for its primitive),
//! with the link time the chunk did not hide shared among its primitives. It fits both parts by
//! least squares over links of different latency. The shipped values come from the
//! simulator at 0 and 60 ms, with chunks on the brick:
//!
//! | Primitive | Seconds | Round trips | Estimate it replaced |
//! |-----------|---------|-------------|----------------------|
//! | arm away → hold / hold → away | 0.401 / 0.394 | 0.98 / 0.98 | 0.28 (85° at 300 °/s) |
//! | `Tilt` | 0.596 | 0.00 | 0.71 |
//! | `Spin(±1)` / `Spin(2)` | 0.687 / 1.156 | 0.99 / 1.01 | 0.68 / 1.35 |
//! | `Turn(±1)` / `Turn(2)` | 0.841 / 1.311 | 0.03 / 0.13 | 0.90 / 1.57 |
//! | sensor arm move / one reading | 0.380 / 0.007 | 1.95 / 1.00 | 0.3 / 0.02 |
//!
//! Run from the host the same primitives took 0.314 / 0.310 s for the arm moves with 1.6
//! round trips each, and 2.4 to 2.9 round trips for tilts and turns; the arm moves are
//! shorter in chunks because a spin starts once the arm is past `arm.clear` and the arm
//! starts down while a spin slows. The host's own load shows in the fit (a busy host
//! answers the brick later): calibrate on a quiet host.
//!
//! The estimates were distance over speed from the ev3dev demo's angles and speeds, link
//! and ramps ignored; on the simulator's motors they were 10–25 % off, so the planner
//! optimised a robot that was not there. A real robot's motors and battery make their own
//! times: calibrate it (`--port PATH --write`); its round trips stay those of the
//! configuration, since with one link they cannot be told apart from the seconds.
//!
//! ## Scan order
//!
//! The faces are read in the order of the ev3dev demo (the Steve-Zheng port is the same):
//!
//! | Step | Primitives before reading | Face on top |
//! |------|---------------------------|-------------|
//! | 1 | — | U |
//! | 2 | `Tilt` | F |
//! | 3 | `Tilt` | D |
//! | 4 | `Spin(-1)`, `Tilt` | L |
//! | 5 | `Spin(+1)`, `Tilt` | B |
//! | 6 | `Tilt` | R |
//!
//! Five tilts and two quarter spins. While reading, the tilt arm is away; before every tilt
//! the sensor arm goes back to clear. The scan ends with Top R, Right D, Front F, Bottom L,
//! Left U, Back B (in the cube's start-up frame), and the solution is planned from there
//! rather than spending moves to restore U on top.
//!
//! ## Sticker order
//!
//! For each face: the centre first, table at rest; then one revolution in the `+`
//! direction with the arm alternating between the corner and the edge radius:
//!
//! | Sample | 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 |
//! |--------|---|---|---|---|---|---|---|---|---|
//! | kind | centre | corner | edge | corner | edge | corner | edge | corner | edge |
//! | table angle | — | 45° | 90° | 135° | 180° | 225° | 270° | 315° | 360° |
//!
//! With the sensor over the Front side (`scan.sensor_side = "front"`), at table 0° the edge
//! spot is the top face's front middle sticker and the corner spot its front left one. A
//! sample is taken on the fly within `scan.window` (12) table degrees of its angle, with
//! the sensor arm within `scan.sensor_tolerance` (12) motor degrees of its target; a sample
//! missed on the fly is read afterwards with the table stopped at its angle. The demo
//! samples on the fly as well; the pybricks port stops every 45°.
//!
//! ## Scan map
//!
//! Facelets are named URFDLB: a face letter and 1–9 row by row as drawn in the usual net
//! (index = face · 9 + row · 3 + column, U = 0, R = 1, F = 2, D = 3, L = 4, B = 5), in the
//! frame of the cube as it sat when the scan began. Derived from the primitives alone:
//!
//! | Step | centre, then samples 1–8 |
//! |------|--------------------------|
//! | 1 (U) | U5, U9, U6, U3, U2, U1, U4, U7, U8 |
//! | 2 (F) | F5, F9, F6, F3, F2, F1, F4, F7, F8 |
//! | 3 (D) | D5, D9, D6, D3, D2, D1, D4, D7, D8 |
//! | 4 (L) | L5, L1, L4, L7, L8, L9, L6, L3, L2 |
//! | 5 (B) | B5, B7, B8, B9, B6, B3, B2, B1, B4 |
//! | 6 (R) | R5, R7, R8, R9, R6, R3, R2, R1, R4 |
//!
//! Renumbered as `rubiks-color-resolver` does (faces U, L, F, R, B, D; squares 1–54) this is
//! the demo's `scan_order` table, which a unit test checks.
//!
//! ## Scan on the brick
//!
//! Sampling on the fly from the host costs a link round trip per sample, so the scan slows
//! down with the link: 23, 28 and 73 s at 0, 60 and 120 ms of reply latency on the
//! simulator, the last because samples the link was too slow for are read again at rest.
//! With `scan.on_brick` (the default) each face is one direct command, a
//! [program on the brick](crate::robot::ev3::protocol#programs-on-the-brick), and the
//! link is used once per face:
//!
//! 1. If the face needs a tilt: wait for the turntable to stop; the tilt arm to hold while
//!    the sensor arm goes out to clear (the tilt arm holding while the sensor arm is still
//!    over the cube is harmless; it only must not swing up past hold); the tilt (apex, back
//!    to hold, `settle_ms`).
//! 2. The tilt arm away while the sensor arm comes in to the first ring position.
//! 3. The revolution starts as soon as the tilt arm is below `arm.clear` (35°: the ev3dev
//!    demo takes the arm as away below that), not when it has stopped; for each ring sample the program waits (a compare-and-jump
//!    loop on OUTPUT_GET_COUNT) until the turntable reaches the sample's angle and the
//!    sensor arm is within `sensor_tolerance` of its spot, or the sample's `window` has
//!    passed, reads RGB-RAW and the two counts into the reply's global memory, and starts
//!    the sensor arm towards the next spot.
//! 4. The centre last, read on the fly (it is on the turntable's axis): the ring's first
//!    corner comes 45° after the start, too soon to read the centre first and still reach
//!    the corner radius in time.
//! 5. The sensor arm starts back to clear; the next face's program waits for it.
//!
//! Where the next face begins with a spin (`Spin(−1)` before L, `Spin(+1)` before B in
//! [Scan order](#scan-order)) the revolution runs in that direction and a quarter further
//! instead: the spin costs 90° at scanning speed and no separate moves of the arms. A
//! revolution in the `−` direction meets the stickers in the opposite order; each sample's
//! calibration slot is the one of its table angle modulo 360° (−90° uses the 270° slot).
//!
//! Every move is a step job to an absolute target that the program computes from the
//! motor's count on the brick, with the driver's deadband and ramps
//! ([Absolute targets](crate::robot::ev3::driver::motion#absolute-targets)); one move routine in
//! the program serves all of them so that a face fits in one command. The brick answers
//! nothing else while a program runs, not even a stop, so a program never waits without a
//! limit: every wait loop checks TIMER_READ against the program's deadline (twice the
//! nominal time of its moves and pauses plus `timeouts.move_extra_ms`) and, past it, stops
//! every motor and reports what it was waiting for. The host checks each reading's angle
//! and sensor-arm position against `window` and `sensor_tolerance`; a sample outside them
//! is read again at rest after the last face.
//!
//! The samples no longer depend on the link's pace, so the revolution can run at the
//! speed the sensor arm allows (a corner-to-edge move takes about 80 ms of the 180 ms
//! between samples at 70 %); the default `scan_speed` is 70 (50 is the value to use when
//! the host polls, `on_brick = false`).
//!
//! ## Execution on the brick
//!
//! Run from the host, every move of a plan is a command, a poll loop until the motor is
//! idle and a pause, so each primitive waits for two or three link round trips and the
//! poll interval, and arm and table never overlap. With `execution.on_brick` (the
//! default) the host sends a *chunk* of primitives as one
//! [program on the brick](crate::robot::ev3::protocol#programs-on-the-brick), built like
//! the scan's from one move routine and compare-and-jump wait loops, and the brick runs
//! them back to back and answers once:
//!
//! * A chunk takes primitives until their nominal motion time would pass
//!   `execution.chunk_seconds` (at least one; at most as many as fit the command's 1024
//!   bytes). The brick answers nothing while a program runs, not even a stop, so a stop
//!   asked for (Ctrl-C) takes effect when the chunk under way ends; `chunk_seconds` bounds
//!   that wait, and every chunk is also bounded on the brick by its own deadline (twice
//!   its nominal time plus `timeouts.move_extra_ms`), after which the program stops every
//!   motor and reports the stage it was waiting in.
//! * Overlaps (each one configurable): with `table_starts_at_clear`, a spin's turntable
//!   starts once the tilt arm, on its way away, is below `arm.clear`, as in the scan; with
//!   `arm_lowers_while_table_stops`, the tilt arm starts down to hold while the turntable
//!   decelerates at the end of a spin, early enough that it reaches `arm.clear` only after
//!   the table has stopped (the arm between clear and hold while the table turns jams the
//!   cube, and an arm coming down on a cube out of square jams it too): the lead is the
//!   table's remaining count at which its remaining time, braking at the constant rate
//!   of its ramp-down, is the arm's nominal time from away to clear divided by
//!   `overlap_margin`.
//! * The settle pause after arm moves stays; between a tilt and the next, between a spin
//!   and a turn, no link round trip and no poll interval remain.
//! * Between chunks the link's round trip is hidden where the mechanism allows
//!   (`answer_during_last_move`): a chunk that ends with a tilt answers once the arm has
//!   passed its apex and is swinging back to hold, one that ends with a layer turn once the
//!   over-rotating move is done and the layer backs off. The cube has changed by then, so
//!   the reply says exactly what happened; the move left running is a step job bounded on
//!   the brick like any other. The next chunk's program first waits for it (its first
//!   stage, with the arm's settle pause), so its reply and the next command travel while
//!   the robot still moves; anything else the host does first waits for it from here, and
//!   a stop (Ctrl-C) lets it end before the motors are stopped. Where a chunk would be cut
//!   short anyway it is cut after a tilt or a turn rather than after a spin or an arm
//!   move, unless that would halve it. A spin cannot answer early: its move is the one
//!   that changes the cube.
//!
//! The program records in its global memory how many primitives it completed, how many
//! of them had their cube-changing move completed (a tilt's apex, a spin's end, a layer
//! turn's over-rotation), and the brick's clock at the end of each. A reply can be lost,
//! and global memory goes with it, so the program also leaves that record where a later
//! command can read it: the colour-sensor arm, idle during execution and free anywhere
//! outwards of `sensor_arm.clear`, steps 9° (started, never waited for) each time a
//! cube-changing move completes and again each time a primitive does, away from where it
//! began towards whichever side has room (a chunk of at most ten primitives). The host
//! journals the whole chunk's intent before sending it and each primitive the reply
//! confirms after it. When a chunk does not complete:
//!
//! * past its deadline, the reply says how many completed, and whether the one under way
//!   had changed the cube; when it had not, the motor's count decides (a table within 8°
//!   of table of either end, the tilt arm below the hold-to-apex midway or near its apex),
//!   and a motor stopped half way leaves both candidates; a program stopped while it still
//!   waited for the chunk before to settle did none of its own;
//! * its reply lost (the program ran on to its end, or its deadline, on the brick), the
//!   sensor arm's count is read as the record (past a mark by more than 4°, it was on its
//!   way to the next, which it starts for only once that step happened), and the motor
//!   counts decide the primitive under way as above. The whole chunk confirmed this way
//!   goes on as if the reply had come. Should the sensor arm not be on its marks, the
//!   turntable's count decides: the prefixes whose resting count (the cumulative rotation
//!   of their spins and turns) is within 8° of table of it, narrowed by the tilt arm's
//!   count, stated as the range of prefixes they leave (tilts between two table moves all
//!   leave the arm at hold).
//!
//! When the chunk before left the tilt arm swinging back to hold, a first tilt of this one
//! cannot be told from that swing by the arm's count past the midway: without the
//! program's record both states stay candidates.
//!
//! `calibrate-timings` times chunks by the brick's clock, so the planner prices what this
//! execution takes ([Timings](#timings)).
//!
//! ## Start-up
//!
//! Connecting pings the brick, checks the four devices (one command), sets the three
//! motors' polarity to normal (an earlier session may have reversed one, see
//! [Polarity](crate::robot::ev3::protocol#polarity)), and takes the turntable's present
//! count as its zero (the turntable has no end stop: the tray must be square when the
//! program starts). Homing drives the sensor arm to its parked stop and the tilt arm to its
//! retracted stop, zeroes both, then moves the arm away and the sensor arm to clear. Any
//! error stops all motors.
//!
//! The sensor arm is homed first, and the tilt arm only then: nobody knows where either is
//! at start-up, and the tilt arm swinging back from its apex could meet a sensor arm over
//! the cube. Once the sensor arm is parked, it goes out to clear (where any tilt arm
//! position is safe) while the tilt arm is homed. With `execution.on_brick` each arm is
//! homed by [programs on the brick](crate::robot::ev3::protocol#programs-on-the-brick)
//! that watch its count themselves (a time job of at most 0.6 s, the stop found when the
//! count has not changed by 2° for `stall_ms` or when a whole job ended without moving it,
//! then the brake and the count cleared there; a motor still moving when its job ends gets
//! another program, up to `home_ms`), so homing takes no more on a slow link than on a
//! fast one and a stop asked for is heard within a second; otherwise the host polls, as
//! the driver's [Homing](crate::robot::ev3::driver::motion#homing) describes.
//!
//! ## 2x2x2
//!
//! The same tilts and spins (after a Steve-Zheng variant): the sensor arm uses one corner
//! radius (`corner_2x2 = −650`) and reads four corners per face, at 45°, 135°, 225° and
//! 315°. The arm must clamp only the top layer of the two; `hold_2x2` is a separate value,
//! and whether a 2x2x2 sits firmly in the tray is not confirmed.

pub mod check;
pub mod config;
pub mod cost;
pub mod error;
pub mod frames;
pub mod machine;
pub mod model;
pub mod planner;
pub mod scan;
pub mod wiring;

pub use config::Config;
pub use error::RobotError;
pub use machine::{ChunkRun, Jog, MindCub3r, Part, Settled};
pub use scan::scan_steps;
