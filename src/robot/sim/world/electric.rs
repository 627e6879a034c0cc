//! The motors' electrical model: what a motor does when a brick drives it as LEGO's
//! `d_pwm` does, with a PWM duty (0..10000) and a bridge mode per output port, instead
//! of the kinematic velocity our brick's controller gives.
//!
//! ## The motor
//!
//! Each motor is a DC motor with its gearbox, seen at the output shaft: back-EMF and
//! torque constant `k` (V·s/rad = N·m/A), winding resistance `r`, rotor and gear inertia
//! `j`, and a friction torque `tau_c` (Coulomb). At battery voltage `V` and duty `d`:
//!
//! * **forward / reverse**: the winding sees ±`d·V` on average (the bridge shorts it for
//!   the rest of each period, "slow decay"), so the torque is `k·(±d·V − k·ω)/r`: at 50 %
//!   duty the motor runs near half its no-load speed;
//! * **brake**: the winding is shorted: back-EMF braking, `−k²·ω/r`;
//! * **coast**: the winding is open: no electrical torque, the motor spins down on its
//!   friction and its load's.
//!
//! The figures ([`DcMotor::large`], [`DcMotor::medium`]) come from the motor models of
//! Pybricks (`pbio` observer models `ev3_l` and `ev3_m`, "partially based on"
//! philohome.com's motor measurements), at 9 V:
//!
//! | | no-load speed | no-load current | a load point | unloaded acceleration |
//! |-|---------------|-----------------|--------------|-----------------------|
//! | large | 175 rpm (1050 °/s) | 0.06 A | 0.173 N·m at 105 rpm | 1000 °/s in 0.1 s |
//! | medium | 260 rpm (1560 °/s) | 0.08 A | 0.0664 N·m at 165 rpm | 2000 °/s in 0.1 s |
//!
//! The torque-speed line through the no-load speed and the load point gives the stall
//! torque: 0.43 N·m (large) and 0.18 N·m (medium; 0.12 N·m is also quoted for it). The
//! no-load current sets the friction (`tau_c = k·i0`), the acceleration the inertia
//! (`j = (stall − tau_c) / a`), and `k` and `r` follow from the line
//! ([`DcMotor::from_figures`]). Speed and torque scale with the battery's voltage.
//!
//! ## What the motor turns
//!
//! Each mechanism adds inertia and friction ([`Load`]; assumed figures: the robot was not
//! measured) and has end stops that are stiff springs with damping: against its stop at
//! full duty a motor gives [`STOP_GIVE_DEG`] degrees ([`Shaft::integrate`], in sub-steps
//! of [`SUB_STEP_S`]). A jammed or blocked mechanism does not move at all (the world's
//! motor, [`super::motor`]).
//!
//! Level: robot (simulators). Must not depend on a brick, `job` or `cli`. No printing.

/// The voltage the motor figures are given at.
pub const NOMINAL_V: f64 = 9.0;
/// Integration sub-step (simulated seconds).
pub const SUB_STEP_S: f64 = 50e-6;
/// How far a motor at full duty and nominal voltage presses into an end stop (degrees).
pub const STOP_GIVE_DEG: f64 = 3.0;
/// Damping of an end stop, as a share of its critical damping.
const STOP_DAMPING_RATIO: f64 = 0.7;
/// The largest PWM duty (`d_pwm`'s MAX_PWM_CNT: 100 %).
pub const MAX_DUTY: u16 = 10_000;

/// How the bridge of an output port drives its motor (from `d_pwm`'s two direction pins:
/// forward DIR0 high, reverse DIR1 high, brake both high, coast both low).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bridge {
    Coast,
    Forward,
    Reverse,
    Brake,
}

/// A DC motor and its gearbox, seen at the output shaft (SI units).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DcMotor {
    /// Torque constant = back-EMF constant (N·m/A, V·s/rad).
    pub k: f64,
    /// Winding resistance (Ω).
    pub r: f64,
    /// Rotor and gear inertia at the shaft (kg·m²).
    pub j: f64,
    /// Friction torque (N·m).
    pub tau_c: f64,
}

impl DcMotor {
    /// A motor from its figures at [`NOMINAL_V`]: no-load speed (°/s), stall torque
    /// (N·m), no-load current (A), unloaded acceleration from rest (°/s²).
    ///
    /// With friction `tau_c = k·i0`, the torque line `k·(V − k·ω)/r − tau_c` is zero at
    /// the no-load speed and the stall torque at rest: `r = k²·ω0/stall` and
    /// `i0·ω0·k² + stall·ω0·k − V·stall = 0`.
    pub fn from_figures(no_load_dps: f64, stall: f64, i0: f64, accel_dps2: f64) -> DcMotor {
        let w0 = no_load_dps.to_radians();
        let (a, b, c) = (i0 * w0, stall * w0, -NOMINAL_V * stall);
        let k = (-b + (b * b - 4.0 * a * c).sqrt()) / (2.0 * a);
        let tau_c = k * i0;
        DcMotor {
            k,
            r: k * k * w0 / stall,
            j: (stall - tau_c) / accel_dps2.to_radians(),
            tau_c,
        }
    }

    /// The EV3 large motor (see the module's table).
    pub fn large() -> DcMotor {
        DcMotor::from_figures(1050.0, stall_torque(0.173, 105.0, 175.0), 0.06, 10_000.0)
    }

    /// The EV3 medium motor (see the module's table).
    pub fn medium() -> DcMotor {
        DcMotor::from_figures(1560.0, stall_torque(0.0664, 165.0, 260.0), 0.08, 20_000.0)
    }

    /// The stall torque at nominal voltage (N·m, friction included).
    pub fn stall(&self) -> f64 {
        self.k * NOMINAL_V / self.r
    }

    /// The electrical torque (N·m) at shaft speed `w` (rad/s) with `duty` (0..10000) in
    /// `bridge` mode from a battery of `volts`.
    pub fn torque(&self, duty: u16, bridge: Bridge, volts: f64, w: f64) -> f64 {
        let d = duty.min(MAX_DUTY) as f64 / MAX_DUTY as f64;
        let applied = match bridge {
            Bridge::Coast => return 0.0,
            Bridge::Brake => 0.0,
            Bridge::Forward => d * volts,
            Bridge::Reverse => -d * volts,
        };
        self.k * (applied - self.k * w) / self.r
    }
}

/// The stall torque of a torque-speed line through a load point (`tau` N·m at `rpm`) and
/// the no-load speed `rpm0`.
fn stall_torque(tau: f64, rpm: f64, rpm0: f64) -> f64 {
    tau * rpm0 / (rpm0 - rpm)
}

/// What a mechanism adds to its motor (at the motor's shaft): inertia (kg·m²) and
/// friction torque (N·m).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Load {
    pub j: f64,
    pub tau_c: f64,
}

impl Load {
    /// The tilt arm: the arm and, when it lifts, the cube (assumed figures).
    pub const TILT_ARM: Load = Load {
        j: 1.0e-3,
        tau_c: 0.03,
    };
    /// The turntable: the tray and the cube through the 1:3 gearing (assumed figures).
    pub const TURNTABLE: Load = Load {
        j: 0.5e-3,
        tau_c: 0.03,
    };
    /// The sensor arm: light (assumed figures).
    pub const SENSOR_ARM: Load = Load {
        j: 0.1e-3,
        tau_c: 0.01,
    };
}

/// A tacho edge: its time from the start of a step (s) and direction (+1: count up).
pub type Crossing = (f64, i8);

/// A shaft turned electrically: its angle (°) and speed (°/s), and its end stops (°).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shaft {
    pub angle: f64,
    pub omega: f64,
    pub min: f64,
    pub max: f64,
}

impl Shaft {
    /// Moves the shaft of `dc` carrying `load` over `dt` under `duty` in `bridge` mode from
    /// a battery of `volts`, in sub-steps; every whole degree the angle crosses is pushed
    /// onto `edges` with its time from the step's start.
    #[allow(clippy::too_many_arguments)]
    pub fn integrate(
        &mut self,
        dc: &DcMotor,
        load: &Load,
        dt: f64,
        duty: u16,
        bridge: Bridge,
        volts: f64,
        edges: &mut Vec<Crossing>,
    ) {
        let j = dc.j + load.j;
        let fric = dc.tau_c + load.tau_c;
        let ks = dc.stall() / STOP_GIVE_DEG.to_radians();
        let cs = 2.0 * STOP_DAMPING_RATIO * (ks * j).sqrt();
        let n = (dt / SUB_STEP_S).ceil().max(1.0);
        let h = dt / n;
        for i in 0..n as u32 {
            let w = self.omega.to_radians();
            let mut tau = dc.torque(duty, bridge, volts, w);
            let below = (self.min - self.angle).max(0.0).to_radians();
            let above = (self.angle - self.max).max(0.0).to_radians();
            if below > 0.0 {
                tau += (ks * below - cs * w).max(0.0);
            }
            if above > 0.0 {
                tau += (-ks * above - cs * w).min(0.0);
            }
            let w1 = if w == 0.0 && tau.abs() <= fric {
                0.0
            } else {
                let dir = if w != 0.0 { w.signum() } else { tau.signum() };
                let w1 = w + (tau - dir * fric) / j * h;
                // Friction stops the shaft; it does not turn it back.
                if w != 0.0 && w1.signum() != w.signum() {
                    0.0
                } else {
                    w1
                }
            };
            let a0 = self.angle;
            self.omega = w1.to_degrees();
            self.angle += self.omega * h;
            crossings(a0, self.angle, i as f64 * h, h, edges);
        }
    }
}

/// The whole degrees crossed going from `a0` to `a1` during a sub-step that starts at `t`
/// and lasts `h`, each with its (interpolated) time and direction.
pub fn crossings(a0: f64, a1: f64, t: f64, h: f64, edges: &mut Vec<Crossing>) {
    let (f0, f1) = (a0.floor(), a1.floor());
    if f1 > f0 {
        let mut n = f0 + 1.0;
        while n <= f1 {
            edges.push((t + h * (n - a0) / (a1 - a0), 1));
            n += 1.0;
        }
    } else if f1 < f0 {
        let mut n = f0;
        while n > f1 {
            edges.push((t + h * (a0 - n) / (a0 - a1), -1));
            n -= 1.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TICK: f64 = 0.002;
    const NO_LOAD: Load = Load { j: 0.0, tau_c: 0.0 };

    /// A large motor's shaft with nothing on it, free or against a stop at 0 (forward).
    fn bare(stop: bool) -> Shaft {
        let max = if stop { 0.0 } else { f64::INFINITY };
        Shaft {
            angle: 0.0,
            omega: 0.0,
            min: f64::NEG_INFINITY,
            max,
        }
    }

    /// Runs `b` for `secs` with `duty` in `bridge` mode at 9 V; the edges, with times from
    /// the start.
    fn run(b: &mut Shaft, secs: f64, duty: u16, bridge: Bridge) -> Vec<Crossing> {
        let mut all = Vec::new();
        let dc = DcMotor::large();
        for k in 0..(secs / TICK).round() as u32 {
            let mut e = Vec::new();
            b.integrate(&dc, &NO_LOAD, TICK, duty, bridge, NOMINAL_V, &mut e);
            all.extend(e.into_iter().map(|(t, d)| (t + k as f64 * TICK, d)));
        }
        all
    }

    #[test]
    fn the_figures_give_the_motors_they_were_taken_from() {
        for (m, w0, stall) in [
            (DcMotor::large(), 1050.0, 0.43),
            (DcMotor::medium(), 1560.0, 0.18),
        ] {
            // No load speed: the torque line meets the friction there.
            let at_w0 = m.torque(MAX_DUTY, Bridge::Forward, NOMINAL_V, f64::to_radians(w0));
            assert!((at_w0 - m.tau_c).abs() < 1e-9, "{m:?}");
            assert!((m.stall() - m.tau_c - stall).abs() < 0.01, "{m:?}");
        }
    }

    #[test]
    fn half_duty_runs_near_half_the_no_load_speed() {
        let mut b = bare(false);
        run(&mut b, 1.0, 5000, Bridge::Forward);
        let half = 1050.0 / 2.0;
        assert!(
            (0.85 * half..=half).contains(&b.omega),
            "{} °/s at 50 %",
            b.omega
        );
        // Full duty: the no-load speed; reverse: the same backwards.
        run(&mut b, 1.0, MAX_DUTY, Bridge::Forward);
        assert!((1040.0..=1050.0).contains(&b.omega), "{}", b.omega);
        run(&mut b, 2.0, MAX_DUTY, Bridge::Reverse);
        assert!((-1050.0..=-1040.0).contains(&b.omega), "{}", b.omega);
    }

    /// Time (s) and travel (°) until the motor stops from full speed in `bridge` mode.
    fn stop(bridge: Bridge) -> (f64, f64) {
        let mut b = bare(false);
        run(&mut b, 1.0, MAX_DUTY, Bridge::Forward);
        let (from, mut t, mut last) = (b.angle, 0.0, b.omega);
        while b.omega > 0.0 {
            run(&mut b, TICK, 0, bridge);
            assert!(b.omega <= last, "slows down all the way");
            last = b.omega;
            t += TICK;
            assert!(t < 10.0, "never stops");
        }
        (t, b.angle - from)
    }

    #[test]
    fn coast_spins_down_on_friction_and_brake_stops_far_sooner() {
        let (tc, dc) = stop(Bridge::Coast);
        let (tb, db) = stop(Bridge::Brake);
        // Coast: only the motor's own friction (0.028 N·m on 2.3 g·m²).
        assert!((1.0..2.5).contains(&tc), "coast {tc} s, {dc}°");
        // Brake: back-EMF braking with a time constant of about 0.1 s, then friction.
        assert!((0.1..0.4).contains(&tb), "brake {tb} s, {db}°");
        assert!(db < dc / 4.0 && db > 20.0, "{db}° braked, {dc}° coasted");
        // Duty 0 forward shorts the winding as a brake does.
        assert_eq!(stop(Bridge::Forward).0, tb);
    }

    #[test]
    fn full_duty_against_a_stop_presses_a_few_degrees_into_it() {
        let mut b = bare(true);
        b.angle = -30.0;
        run(&mut b, 1.0, MAX_DUTY, Bridge::Forward);
        assert!(b.omega.abs() < 1.0, "at rest: {}", b.omega);
        assert!(
            (STOP_GIVE_DEG - 0.5..=STOP_GIVE_DEG + 0.5).contains(&b.angle),
            "{}° into the stop",
            b.angle
        );
        // Let go (coast): the stop pushes it back out.
        run(&mut b, 0.5, 0, Bridge::Coast);
        assert!(b.angle < 0.5, "{}", b.angle);
    }

    #[test]
    fn the_edges_follow_the_angle_degree_by_degree() {
        let mut b = bare(true);
        b.angle = -200.3;
        let start = b.angle;
        let mut edges = run(&mut b, 0.3, 8000, Bridge::Forward);
        edges.extend(
            run(&mut b, 0.2, 6000, Bridge::Reverse)
                .into_iter()
                .map(|(t, d)| (t + 0.3, d)),
        );
        edges.extend(
            run(&mut b, 0.5, 10000, Bridge::Forward)
                .into_iter()
                .map(|(t, d)| (t + 0.5, d)),
        );
        let net: i64 = edges.iter().map(|&(_, d)| d as i64).sum();
        assert_eq!(net, (b.angle.floor() - start.floor()) as i64);
        assert!(edges.windows(2).all(|w| w[0].0 <= w[1].0), "in time order");
        let ups = edges.iter().filter(|e| e.1 > 0).count();
        let downs = edges.len() - ups;
        assert!(ups > 100 && downs > 30, "{ups} up, {downs} down");
    }
}
