//! The link between a host and a simulated brick, with its faults: one layer that wraps
//! any brick (ours, or a firmware brick) and stands between it and the
//! [pty server](super::pty). The link is not the brick: what it does to frames and
//! replies does not depend on how the brick runs them.
//!
//! It cuts the host's bytes into frames, counts them (every frame that gets through is a
//! command, from 1; one of at least [`PROGRAM_BYTES`] is also a program, from 1), hands
//! them to the brick, and matches every reply the brick produces to the command it
//! answers by the message counter (bytes 2..4 of both). On the way it applies the link
//! faults of [`Faults`] (see [Faults](crate::robot::sim::config#faults)):
//!
//! * `drop@N` / `drop@pK`: the reply to that command is lost; the command runs.
//! * `silent@N` / `silent@pK`: from that command on no frame reaches the brick.
//! * `corrupt@N` / `corrupt@pK`: one byte of that command's reply (seeded position and
//!   value) changes on the way.
//! * `dropout@N=MS` / `dropout@pK=MS`: from that command's arrival, for MS, every frame
//!   the host sends (not counted) and every reply the brick produces is lost.
//! * `jitter=MS`: every reply's delay moves by a seeded draw in ±MS, never overtaking the
//!   reply before it. (`latency=MS` is the pty server's: it delays every reply.)
//!
//! Level: robot (simulators; uses the framing of [`crate::robot::ev3::protocol`]). Knows
//! nothing of how a brick runs a command. No printing: notes go to the brick's log.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::robot::ev3::protocol::{self, FrameBuffer, MAX_MESSAGE};
use crate::robot::sim::config::{Faults, SimConfig, PROGRAM_BYTES};
use crate::robot::sim::pty::Peer;

/// A brick as the link serves it: whole frames in, replies out stamped with the
/// simulated time the brick produced them.
pub trait Brick: Send + 'static {
    /// A whole frame from the host, arriving now; a reply produced at once goes to `out`.
    fn deliver(&mut self, frame: &[u8], out: &mut Vec<(f64, Vec<u8>)>);
    /// Runs the brick's simulated time up to `now`; replies produced meanwhile go to
    /// `out`. Returns the brick's clock.
    fn run_until(&mut self, now: f64, out: &mut Vec<(f64, Vec<u8>)>) -> f64;
    /// The brick's clock (simulated seconds).
    fn clock(&self) -> f64;
    /// A line for the brick's log (the brick stamps it with its clock).
    fn note(&mut self, line: String);
    /// The end of a round: the brick makes its state visible (to its handle).
    fn publish(&mut self) {}
}

/// What the link does to one command's reply.
#[derive(Clone, Copy, Debug)]
struct Pending {
    counter: u16,
    /// The command's number (from 1).
    n: u64,
    drop: bool,
    corrupt: bool,
}

/// The link layer around a brick `B`: a [`Peer`] of the pty server.
pub struct Link<B: Brick> {
    brick: B,
    frames: FrameBuffer,
    faults: Faults,
    commands: u64,
    programs: u64,
    silent: bool,
    /// Simulated time until which the link is down (a `dropout` fault).
    down_until: f64,
    /// Commands whose reply has not come yet and that a fault waits for.
    pending: Vec<Pending>,
    jitter: Jitter,
    /// The link latency the pty server adds to every stamp (simulated seconds).
    latency: f64,
    /// The `corrupt` fault's draws (a stream of its own).
    rng: ChaCha8Rng,
}

impl<B: Brick> Link<B> {
    /// The link of `cfg` (its faults, jitter and latency) around `brick`.
    pub fn new(brick: B, cfg: &SimConfig) -> Link<B> {
        Link {
            brick,
            frames: FrameBuffer::default(),
            faults: cfg.faults.clone(),
            commands: 0,
            programs: 0,
            silent: false,
            down_until: 0.0,
            pending: Vec::new(),
            jitter: Jitter::new(cfg),
            latency: Self::latency_of(cfg),
            rng: ChaCha8Rng::seed_from_u64(cfg.seed ^ 0xC0_4407),
        }
    }

    /// The latency the pty server must add to every reply of a link of `cfg` (simulated
    /// seconds): the transport's and the `latency` fault's.
    pub fn latency_of(cfg: &SimConfig) -> f64 {
        (cfg.latency_ms + cfg.faults.latency_ms as f64).max(0.0) / 1000.0
    }

    fn down(&self, t: f64) -> bool {
        t < self.down_until
    }

    /// A frame from the host at the brick's clock: lost, kept from the brick, or
    /// delivered (its reply's faults noted for when it comes).
    fn frame(&mut self, frame: &[u8], out: &mut Vec<(f64, Vec<u8>)>) {
        let now = self.brick.clock();
        if self.down(now) {
            self.brick.note(format!(
                "link drop-out: a frame from the host is lost ({})",
                protocol::hex(frame)
            ));
            return;
        }
        self.commands += 1;
        let n = self.commands;
        let program = (frame.len() >= PROGRAM_BYTES).then(|| {
            self.programs += 1;
            self.programs
        });
        let f = &self.faults;
        if self.silent
            || f.silent_at.is_some_and(|s| n >= s)
            || (program.is_some() && program == f.silent_program)
        {
            if !self.silent {
                self.silent = true;
                self.brick
                    .note(format!("fault injected: link silent from command {n} on"));
            }
            return;
        }
        let dropout = f
            .dropouts
            .iter()
            .find(|d| {
                if d.program {
                    program == Some(d.at)
                } else {
                    d.at == n
                }
            })
            .copied();
        if let Some(d) = dropout {
            self.down_until = now + d.ms as f64 / 1000.0;
            self.brick.note(format!(
                "fault injected: the link drops out for {} ms from command {n} on",
                d.ms
            ));
        }
        let drop = f.drop_at == Some(n) || (program.is_some() && f.drop_program == program);
        let corrupt =
            f.corrupt.contains(&n) || program.is_some_and(|k| f.corrupt_programs.contains(&k));
        if (drop || corrupt) && frame.len() >= 5 {
            self.pending.push(Pending {
                counter: u16::from_le_bytes([frame[2], frame[3]]),
                n,
                drop,
                corrupt,
            });
        }
        let mut replies = Vec::new();
        self.brick.deliver(frame, &mut replies);
        self.replies(replies, out);
    }

    /// Replies on their way to the host: matched to their command, lost, corrupted or
    /// passed, and stamped.
    fn replies(&mut self, replies: Vec<(f64, Vec<u8>)>, out: &mut Vec<(f64, Vec<u8>)>) {
        for (t, mut r) in replies {
            let counter = (r.len() >= 4).then(|| u16::from_le_bytes([r[2], r[3]]));
            let at = counter.and_then(|c| self.pending.iter().position(|p| p.counter == c));
            if let Some(i) = at {
                let p = self.pending.remove(i);
                if p.drop {
                    self.brick
                        .note(format!("fault injected: reply to command {} lost", p.n));
                    continue;
                }
                if p.corrupt && !r.is_empty() {
                    let i = self.rng.gen_range(0..r.len());
                    let old = r[i];
                    r[i] = old ^ self.rng.gen_range(1..=255u8);
                    self.brick.note(format!(
                        "fault injected: reply byte {i} corrupted (0x{old:02X} -> 0x{:02X})",
                        r[i]
                    ));
                }
            }
            if self.down(t) {
                self.brick.note(format!(
                    "link drop-out: a reply is lost ({})",
                    protocol::hex(&r)
                ));
                continue;
            }
            out.push((self.jitter.stamp(t, self.latency), r));
        }
    }
}

impl<B: Brick> Peer for Link<B> {
    fn receive(&mut self, bytes: &[u8]) {
        self.frames.push(bytes);
        let skipped = self.frames.skip_to_command();
        if skipped > 0 {
            self.brick.note(format!(
                "{skipped} byte(s) from the host that cannot begin an EV3 frame dropped"
            ));
        }
    }

    fn run_until(&mut self, now: f64, out: &mut Vec<(f64, Vec<u8>)>) -> f64 {
        let mut replies = Vec::new();
        self.brick.run_until(now, &mut replies);
        self.replies(replies, out);
        while let Some(f) = self.frames.pop() {
            if f.len() > MAX_MESSAGE {
                continue;
            }
            self.frame(&f, out);
        }
        self.brick.publish();
        self.brick.clock()
    }
}

/// The `jitter=MS` fault: each reply's delay moves by a seeded draw in ±`spread`
/// (simulated seconds), never below the bare production time and never ahead of the reply
/// before it (a serial link does not reorder).
struct Jitter {
    spread: f64,
    rng: ChaCha8Rng,
    last: f64,
}

impl Jitter {
    fn new(cfg: &SimConfig) -> Jitter {
        Jitter {
            spread: cfg.faults.jitter_ms as f64 / 1000.0,
            // A stream of its own, so the jitter never changes the sensor noise of a seed.
            rng: ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x0717_7E12),
            last: f64::NEG_INFINITY,
        }
    }

    /// The time to stamp on a reply produced at `t` when the link adds `latency`
    /// (simulated seconds) on top of the stamp.
    fn stamp(&mut self, t: f64, latency: f64) -> f64 {
        let mut s = t;
        if self.spread > 0.0 {
            let d: f64 = self.rng.gen_range(-self.spread..=self.spread);
            s = t + d.max(-latency);
        }
        s = s.max(self.last);
        self.last = s;
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A brick that answers every command wanting a reply 0.1 s after it arrives, one
    /// command at a time in arrival order.
    struct Echo {
        clock: f64,
        queue: Vec<(f64, Vec<u8>)>,
        log: Vec<String>,
        seen: Vec<u16>,
    }

    impl Brick for Echo {
        fn deliver(&mut self, frame: &[u8], _out: &mut Vec<(f64, Vec<u8>)>) {
            let counter = u16::from_le_bytes([frame[2], frame[3]]);
            self.seen.push(counter);
            if frame[4] & 0x80 == 0 {
                let reply = protocol::encode_reply(counter, true, &[counter as u8]);
                self.queue.push((self.clock + 0.1, reply));
            }
        }

        fn run_until(&mut self, now: f64, out: &mut Vec<(f64, Vec<u8>)>) -> f64 {
            self.clock = self.clock.max(now);
            let due: Vec<_> = self
                .queue
                .iter()
                .filter(|(t, _)| *t <= now)
                .cloned()
                .collect();
            self.queue.retain(|(t, _)| *t > now);
            out.extend(due);
            self.clock
        }

        fn clock(&self) -> f64 {
            self.clock
        }

        fn note(&mut self, line: String) {
            self.log.push(line);
        }
    }

    fn link(faults: &str) -> Link<Echo> {
        let cfg = SimConfig {
            seed: 3,
            faults: faults.parse().unwrap(),
            ..SimConfig::default()
        };
        let echo = Echo {
            clock: 0.0,
            queue: Vec::new(),
            log: Vec::new(),
            seen: Vec::new(),
        };
        Link::new(echo, &cfg)
    }

    fn ping(counter: u16, bytes: usize) -> Vec<u8> {
        let mut f = vec![0, 0, 0, 0, 0, 0, 0];
        f[2..4].copy_from_slice(&counter.to_le_bytes());
        f.resize(bytes.max(7), 0x01);
        let len = (f.len() - 2) as u16;
        f[..2].copy_from_slice(&len.to_le_bytes());
        f
    }

    /// Sends `frames` at times 0, 0.01, ... and runs to 1 s; the replies' counters and
    /// bytes.
    fn exchange(l: &mut Link<Echo>, frames: &[Vec<u8>]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for (i, f) in frames.iter().enumerate() {
            l.run_until(i as f64 * 0.01, &mut out);
            l.receive(f);
            l.run_until(i as f64 * 0.01, &mut out);
        }
        l.run_until(1.0, &mut out);
        out.into_iter().map(|(_, r)| r).collect()
    }

    fn counters(replies: &[Vec<u8>]) -> Vec<u16> {
        replies
            .iter()
            .map(|r| u16::from_le_bytes([r[2], r[3]]))
            .collect()
    }

    #[test]
    fn a_dropped_reply_is_the_one_whose_counter_matches() {
        // Command 2 (counter 11) loses its reply, though it comes after command 3 was sent.
        let mut l = link("drop@2");
        let r = exchange(&mut l, &[ping(10, 8), ping(11, 8), ping(12, 8)]);
        assert_eq!(counters(&r), vec![10, 12]);
        assert_eq!(l.brick.seen, vec![10, 11, 12], "the command ran");
        assert!(l
            .brick
            .log
            .iter()
            .any(|x| x.contains("reply to command 2 lost")));
        // By program: the second frame of at least PROGRAM_BYTES.
        let mut l = link("drop@p2");
        let frames = [ping(1, PROGRAM_BYTES), ping(2, 8), ping(3, PROGRAM_BYTES)];
        assert_eq!(counters(&exchange(&mut l, &frames)), vec![1, 2]);
    }

    #[test]
    fn corrupt_silent_and_dropout_act_on_the_link() {
        let mut l = link("corrupt@1");
        let r = exchange(&mut l, &[ping(5, 8), ping(6, 8)]);
        let clean = protocol::encode_reply(6, true, &[6]);
        assert_eq!(r[1], clean);
        assert_ne!(r[0], protocol::encode_reply(5, true, &[5]));
        // Silent from command 2: the brick never sees it or what follows.
        let mut l = link("silent@2");
        let r = exchange(&mut l, &[ping(1, 8), ping(2, 8), ping(3, 8)]);
        assert_eq!((counters(&r), l.brick.seen.clone()), (vec![1], vec![1]));
        // A drop-out of 15 ms from command 1: its reply (at 0.1 s) gets through, the frame
        // at 0.01 s is lost and not counted, so the frame at 0.02 s is command 2.
        let mut l = link("dropout@1=15,drop@2");
        let r = exchange(&mut l, &[ping(1, 8), ping(2, 8), ping(3, 8)]);
        assert_eq!(l.brick.seen, vec![1, 3]);
        assert_eq!(counters(&r), vec![1]);
        // A drop-out that outlasts the reply loses it.
        let mut l = link("dropout@1=500");
        assert!(exchange(&mut l, &[ping(1, 8)]).is_empty());
        assert!(l.brick.log.iter().any(|x| x.contains("a reply is lost")));
    }

    fn stamps(seed: u64, faults: &str) -> Vec<f64> {
        let cfg = SimConfig {
            seed,
            faults: faults.parse().unwrap(),
            ..SimConfig::default()
        };
        let mut j = Jitter::new(&cfg);
        (0..200).map(|i| j.stamp(i as f64 * 0.01, 0.05)).collect()
    }

    #[test]
    fn jitter_is_seeded_bounded_and_keeps_the_order() {
        let a = stamps(4, "jitter=20");
        assert_eq!(a, stamps(4, "jitter=20"), "same seed, same delays");
        assert_ne!(a, stamps(5, "jitter=20"));
        let mut spread = (f64::INFINITY, f64::NEG_INFINITY);
        for (i, (w, s)) in a.windows(2).zip(&a).enumerate() {
            let d = s - i as f64 * 0.01;
            assert!((-0.020 - 1e-9..=0.020 + 1e-9).contains(&d), "{d}");
            assert!(w[1] >= w[0], "replies never overtake each other");
            spread = (spread.0.min(d), spread.1.max(d));
        }
        assert!(spread.1 - spread.0 > 0.03, "{spread:?}");
        // Without the fault, stamps are the production times.
        let plain = stamps(4, "");
        assert!(plain.iter().enumerate().all(|(i, &s)| s == i as f64 * 0.01));
    }
}
