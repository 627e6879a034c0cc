//! Optimal 2x2x2: a full distance table over the 3,674,160 states with the DBL corner
//! fixed (7! permutations × 3⁶ twists), in both metrics, and a depth-first descent along
//! it (every move that lowers the distance is on an optimal path), which also lists all
//! optimal solutions or, when more are asked for, the next-shortest ones.
//!
//! Level: part of `solver`; depends on `cube`, the coordinates, the shared table and search
//! helpers. Must not depend on the 3x3x3 searches' internals or anything above `solver`.

// Index loops over parallel arrays (slots, pieces, moves) read best as they are.
#![allow(clippy::needless_range_loop)]

use crate::cube::{Face, PocketCube, Turn};

use super::coord::{perm_rank, perm_unrank};
use super::search::{record, Clock, Ended, Found, Limits};
use super::tables::bfs_distances;

/// The nine face turns that keep DBL fixed: U U2 U' R R2 R' F F2 F' (face-turn indices 0..9).
pub(crate) const POCKET_MOVES: usize = 9;
const N_PERM: usize = 5040;
const N_TWIST: usize = 729;
pub(crate) const N_STATES: usize = N_PERM * N_TWIST;
/// Slots other than DBL (6).
const SLOTS: [usize; 7] = [0, 1, 2, 3, 4, 5, 7];

/// The 2x2x2 tables.
pub(crate) struct PocketTables {
    perm_move: Vec<u16>,
    twist_move: Vec<u16>,
    /// Distance to solved in the half-turn metric.
    pub htm: Vec<u8>,
    /// Distance to solved in the quarter-turn metric.
    pub qtm: Vec<u8>,
}

/// The state index of a 2x2x2 whose DBL corner is home.
pub(crate) fn pocket_index(c: &PocketCube) -> usize {
    let p: [u8; 7] = std::array::from_fn(|i| {
        let x = c.cp[SLOTS[i]];
        if x == 7 {
            6
        } else {
            x
        }
    });
    let tw = (0..6).fold(0usize, |a, i| a * 3 + c.co[i] as usize);
    perm_rank(&p) * N_TWIST + tw
}

fn pocket_from_index(i: usize) -> PocketCube {
    let (p, mut tw) = (i / N_TWIST, i % N_TWIST);
    let mut perm = [0u8; 7];
    perm_unrank(p, &mut perm);
    let mut c = PocketCube::SOLVED;
    for k in 0..7 {
        c.cp[SLOTS[k]] = if perm[k] == 6 { 7 } else { perm[k] };
    }
    let mut sum = 0;
    for k in (0..6).rev() {
        c.co[k] = (tw % 3) as u8;
        sum += c.co[k];
        tw /= 3;
    }
    c.co[6] = 0;
    c.co[7] = (3 - sum % 3) % 3;
    c
}

fn move_cube(m: usize) -> PocketCube {
    PocketCube::face_move(Face::ALL[m / 3], Turn::ALL[m % 3])
}

fn bfs(perm_move: &[u16], twist_move: &[u16], moves: &[usize]) -> Vec<u8> {
    bfs_distances(N_STATES, moves, |x, m| {
        let (p, t) = (x / N_TWIST, x % N_TWIST);
        perm_move[p * POCKET_MOVES + m] as usize * N_TWIST
            + twist_move[t * POCKET_MOVES + m] as usize
    })
}

impl PocketTables {
    pub fn build() -> PocketTables {
        let cubes: Vec<PocketCube> = (0..POCKET_MOVES).map(move_cube).collect();
        let mut perm_move = vec![0u16; N_PERM * POCKET_MOVES];
        for p in 0..N_PERM {
            let c = pocket_from_index(p * N_TWIST);
            for (m, mc) in cubes.iter().enumerate() {
                perm_move[p * POCKET_MOVES + m] = (pocket_index(&c.multiply(mc)) / N_TWIST) as u16;
            }
        }
        let mut twist_move = vec![0u16; N_TWIST * POCKET_MOVES];
        for t in 0..N_TWIST {
            let c = pocket_from_index(t);
            for (m, mc) in cubes.iter().enumerate() {
                twist_move[t * POCKET_MOVES + m] = (pocket_index(&c.multiply(mc)) % N_TWIST) as u16;
            }
        }
        let (htm, qtm) = rayon::join(
            || {
                bfs(
                    &perm_move,
                    &twist_move,
                    &(0..POCKET_MOVES).collect::<Vec<_>>(),
                )
            },
            || bfs(&perm_move, &twist_move, &[0, 2, 3, 5, 6, 8]),
        );
        PocketTables {
            perm_move,
            twist_move,
            htm,
            qtm,
        }
    }

    pub fn bytes(&self) -> usize {
        2 * (self.perm_move.len() + self.twist_move.len()) + self.htm.len() + self.qtm.len()
    }

    #[inline(always)]
    fn step(&self, s: usize, m: usize) -> usize {
        let (p, t) = (s / N_TWIST, s % N_TWIST);
        self.perm_move[p * POCKET_MOVES + m] as usize * N_TWIST
            + self.twist_move[t * POCKET_MOVES + m] as usize
    }

    /// Distance of a state index in the metric.
    pub fn distance(&self, s: usize, qtm: bool) -> u32 {
        if qtm {
            self.qtm[s] as u32
        } else {
            self.htm[s] as u32
        }
    }

    /// Up to `lim.solutions` distinct solutions, shortest first (all optimal ones come
    /// before any longer one); adds the nodes searched to `nodes`.
    pub fn solve(
        &self,
        c: &PocketCube,
        lim: &Limits,
        nodes: &mut u64,
    ) -> Result<Vec<Found>, Ended> {
        let s = pocket_index(c);
        let d = self.distance(s, lim.qtm);
        if d > lim.max_cost {
            return Err(Ended::Exhausted);
        }
        let mut search = Descent {
            t: self,
            qtm: lim.qtm,
            want: lim.solutions.max(1),
            path: Vec::with_capacity(16),
            found: Vec::new(),
            clock: Clock::new(lim.deadline),
        };
        // With every optimal solution asked for, only the distance itself is searched.
        let last = if lim.all_optimal { d } else { lim.max_cost };
        for bound in d..=last {
            if search.dfs(s, bound, usize::MAX) || search.clock.timed_out {
                break;
            }
            if d == 0 {
                break;
            }
        }
        *nodes += search.clock.nodes;
        if search.found.is_empty() {
            return Err(if search.clock.timed_out {
                Ended::TimedOut
            } else {
                Ended::Exhausted
            });
        }
        Ok(search.found)
    }
}

struct Descent<'a> {
    t: &'a PocketTables,
    qtm: bool,
    want: usize,
    path: Vec<u8>,
    found: Vec<Found>,
    clock: Clock,
}

impl Descent<'_> {
    fn dfs(&mut self, s: usize, togo: u32, last_face: usize) -> bool {
        if togo == 0 {
            if s == 0 {
                let cost = self.path.iter().map(|&m| cost(m as usize, self.qtm)).sum();
                return record(&mut self.found, &self.path, cost, self.want);
            }
            return false;
        }
        if self.clock.tick() {
            return true;
        }
        for m in 0..POCKET_MOVES {
            if m / 3 == last_face {
                continue;
            }
            let c = cost(m, self.qtm);
            if c > togo {
                continue;
            }
            let s2 = self.t.step(s, m);
            if self.t.distance(s2, self.qtm) > togo - c {
                continue;
            }
            self.path.push(m as u8);
            let done = self.dfs(s2, togo - c, m / 3);
            self.path.pop();
            if done {
                return true;
            }
        }
        false
    }
}

fn cost(m: usize, qtm: bool) -> u32 {
    if qtm && m % 3 == 1 {
        2
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_tables_have_the_known_distributions() {
        // The 3,674,160 positions of the 2x2x2 (one corner fixed) by optimal distance,
        // half-turn and quarter-turn metric (God's number 11 and 14).
        let t = PocketTables::build();
        let hist = |d: &[u8]| {
            let mut h = vec![0u64; 1 + *d.iter().max().unwrap() as usize];
            for &x in d {
                h[x as usize] += 1;
            }
            h
        };
        assert_eq!(
            hist(&t.htm),
            [1, 9, 54, 321, 1847, 9992, 50136, 227536, 870072, 1887748, 623800, 2644]
        );
        assert_eq!(
            hist(&t.qtm),
            [
                1, 6, 27, 120, 534, 2256, 8969, 33058, 114149, 360508, 930588, 1350852, 782536,
                90280, 276
            ]
        );
    }

    #[test]
    fn index_round_trips() {
        for i in (0..N_STATES).step_by(997) {
            assert_eq!(pocket_index(&pocket_from_index(i)), i);
        }
    }
}
