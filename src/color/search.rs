//! k-best search over piece assignments: best-first (A*) enumeration of the ways to put
//! `n` distinct pieces, each in one of `m` orientations, into `n` slots, in increasing
//! total cost, with the orientation sum ≡ 0 (mod m) and the permutation parity tracked.
//!
//! Level: pure combinatorics for `color::resolve`; depends on nothing. No printing.
//!
//! The heuristic is exact for the relaxed problem that ignores piece uniqueness (a small
//! dynamic programme over slots and orientation sums), so it is admissible and consistent:
//! solutions come out in non-decreasing cost order, each exactly once (slots are filled in
//! a fixed order).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// One complete assignment.
#[derive(Clone, Debug, PartialEq)]
pub struct Assignment {
    pub cost: f64,
    /// `pieces[slot] = (piece, orientation)`.
    pub pieces: Vec<(u8, u8)>,
    /// Permutation parity (0 even, 1 odd).
    pub parity: u8,
}

#[derive(Clone)]
struct Node {
    f: f64,
    g: f64,
    slot: u8,
    used: u16,
    ori_sum: u8,
    parity: u8,
    path: [(u8, u8); 12],
}

impl PartialEq for Node {
    fn eq(&self, other: &Self) -> bool {
        self.f == other.f
    }
}
impl Eq for Node {}
impl PartialOrd for Node {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Node {
    fn cmp(&self, other: &Self) -> Ordering {
        // Min-heap on f; deeper nodes first on ties (reach solutions sooner).
        other
            .f
            .total_cmp(&self.f)
            .then_with(|| self.slot.cmp(&other.slot))
    }
}

/// A resumable enumeration of assignments in increasing cost.
pub struct KBest {
    n: usize,
    m: usize,
    /// `cost[(slot * n + piece) * m + ori]`.
    cost: Vec<f64>,
    /// `h[slot * m + r]`: least cost to fill slots `slot..n` with orientations summing to
    /// `r` (mod m), ignoring uniqueness.
    h: Vec<f64>,
    heap: BinaryHeap<Node>,
    /// Nodes expanded so far.
    pub expanded: usize,
    /// Cost of the last node popped: every solution not yet returned costs at least this.
    pub frontier: f64,
    exhausted: bool,
}

impl KBest {
    /// `cost[(slot * n + piece) * m + ori]` for `n ≤ 12` slots/pieces and `m` orientations.
    pub fn new(n: usize, m: usize, cost: Vec<f64>) -> KBest {
        assert!(n <= 12 && cost.len() == n * n * m);
        let mut h = vec![f64::INFINITY; (n + 1) * m];
        h[n * m] = 0.0;
        for slot in (0..n).rev() {
            // best[o] = cheapest piece in this slot with orientation o.
            let best: Vec<f64> = (0..m)
                .map(|o| {
                    (0..n)
                        .map(|p| cost[(slot * n + p) * m + o])
                        .fold(f64::INFINITY, f64::min)
                })
                .collect();
            for r in 0..m {
                let mut v = f64::INFINITY;
                for (o, &b) in best.iter().enumerate() {
                    let rest = (r + m - o) % m;
                    v = v.min(b + h[(slot + 1) * m + rest]);
                }
                h[slot * m + r] = v;
            }
        }
        let mut heap = BinaryHeap::new();
        let h0 = h[0];
        heap.push(Node {
            f: h0,
            g: 0.0,
            slot: 0,
            used: 0,
            ori_sum: 0,
            parity: 0,
            path: [(0, 0); 12],
        });
        KBest {
            n,
            m,
            cost,
            h,
            heap,
            expanded: 0,
            frontier: h0,
            exhausted: false,
        }
    }

    /// The next cheapest assignment, or `None` when there is none left or `budget` node
    /// expansions (in total) have been spent.
    pub fn next_solution(&mut self, budget: usize) -> Option<Assignment> {
        let (n, m) = (self.n, self.m);
        while let Some(node) = self.heap.pop() {
            self.frontier = node.f;
            let slot = node.slot as usize;
            if slot == n {
                return Some(Assignment {
                    cost: node.g,
                    pieces: node.path[..n].to_vec(),
                    parity: node.parity,
                });
            }
            if self.expanded >= budget {
                self.heap.push(node);
                return None;
            }
            self.expanded += 1;
            for p in 0..n {
                if node.used & (1 << p) != 0 {
                    continue;
                }
                // Inversions added by placing piece p after the used ones.
                let higher = (node.used >> (p + 1)).count_ones() as u8;
                for o in 0..m {
                    let c = self.cost[(slot * n + p) * m + o];
                    if !c.is_finite() {
                        continue;
                    }
                    let ori_sum = ((node.ori_sum as usize + o) % m) as u8;
                    let need = (m - ori_sum as usize) % m;
                    let g = node.g + c;
                    let f = g + self.h[(slot + 1) * m + need];
                    if !f.is_finite() {
                        continue;
                    }
                    let mut path = node.path;
                    path[slot] = (p as u8, o as u8);
                    self.heap.push(Node {
                        f,
                        g,
                        slot: slot as u8 + 1,
                        used: node.used | (1 << p),
                        ori_sum,
                        parity: (node.parity + higher) & 1,
                        path,
                    });
                }
            }
        }
        self.exhausted = true;
        self.frontier = f64::INFINITY;
        None
    }

    /// True when every assignment has been returned.
    pub fn is_exhausted(&self) -> bool {
        self.exhausted
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn brute(n: usize, m: usize, cost: &[f64]) -> Vec<(f64, u8)> {
        // All permutations × orientations with sum ≡ 0.
        let mut out = Vec::new();
        let mut perm: Vec<usize> = (0..n).collect();
        fn rec(
            k: usize,
            n: usize,
            m: usize,
            perm: &mut Vec<usize>,
            cost: &[f64],
            out: &mut Vec<(f64, u8)>,
        ) {
            if k == n {
                let mut inv = 0;
                for i in 0..n {
                    for j in i + 1..n {
                        if perm[i] > perm[j] {
                            inv += 1;
                        }
                    }
                }
                let total = m.pow(n as u32);
                for code in 0..total {
                    let mut c = code;
                    let (mut s, mut sum) = (0.0, 0);
                    for (slot, &p) in perm.iter().enumerate() {
                        let o = c % m;
                        c /= m;
                        sum += o;
                        s += cost[(slot * n + p) * m + o];
                    }
                    if sum % m == 0 {
                        out.push((s, (inv % 2) as u8));
                    }
                }
                return;
            }
            for i in k..n {
                perm.swap(k, i);
                rec(k + 1, n, m, perm, cost, out);
                perm.swap(k, i);
            }
        }
        rec(0, n, m, &mut perm, cost, &mut out);
        out.sort_by(|a, b| a.0.total_cmp(&b.0));
        out
    }

    #[test]
    fn enumerates_in_cost_order_like_brute_force() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        for &(n, m) in &[(4usize, 3usize), (4, 2), (5, 2)] {
            let cost: Vec<f64> = (0..n * n * m).map(|_| rng.gen_range(0.0..10.0)).collect();
            let all = brute(n, m, &cost);
            let mut kb = KBest::new(n, m, cost.clone());
            for want in all.iter().take(30) {
                let got = kb.next_solution(usize::MAX).unwrap();
                assert!(
                    (got.cost - want.0).abs() < 1e-9,
                    "{} vs {}",
                    got.cost,
                    want.0
                );
                // Parity matches its own permutation.
                let perm: Vec<u8> = got.pieces.iter().map(|x| x.0).collect();
                let mut inv = 0;
                for i in 0..n {
                    for j in i + 1..n {
                        if perm[i] > perm[j] {
                            inv += 1;
                        }
                    }
                }
                assert_eq!(got.parity, inv % 2);
                let osum: usize = got.pieces.iter().map(|x| x.1 as usize).sum();
                assert_eq!(osum % m, 0);
            }
        }
    }
}
