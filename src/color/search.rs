//! k-best search over piece assignments: best-first (A*) enumeration of the ways to put
//! `n` distinct pieces, each in one of `m` orientations, into `n` slots, in increasing
//! total cost, with the orientation sum ≡ 0 (mod m) and the permutation parity tracked.
//!
//! Level: pure combinatorics for `color::resolve`; depends on nothing in the crate. Must not
//! depend on colours or cubes (it sees costs only). No printing.
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

/// A heap entry: a partial assignment (`slot` slots filled) together with the index of
/// the next child to try, from the list of that slot's candidates sorted by their f-value
/// increment. Children are generated lazily (partial expansion): popping an entry makes one
/// child and the entry's next sibling, so the heap grows by at most two per pop.
#[derive(Clone)]
struct Node {
    /// f of the child this entry stands for.
    f: f64,
    /// Cost of the parent (filled slots).
    g: f64,
    slot: u8,
    used: u16,
    ori_sum: u8,
    parity: u8,
    /// Index into `order[slot][ori_sum]` of the child this entry stands for.
    next: u16,
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

/// One child of a slot: piece, orientation, its cost, and cost + h of what remains.
#[derive(Clone, Copy)]
struct Child {
    piece: u8,
    ori: u8,
    cost: f64,
    delta: f64,
}

/// A resumable enumeration of assignments in increasing cost.
pub struct KBest {
    n: usize,
    m: usize,
    /// `order[slot * m + ori_sum]`: the slot's children sorted by `delta` = cost +
    /// h(next slot, orientation still needed).
    order: Vec<Vec<Child>>,
    heap: BinaryHeap<Node>,
    /// Entries popped so far.
    pub expanded: usize,
    /// Cost of the last entry popped: every solution not yet returned costs at least this.
    pub frontier: f64,
    exhausted: bool,
}

impl KBest {
    /// `cost[(slot * n + piece) * m + ori]` for `n ≤ 12` slots/pieces and `m` orientations.
    pub fn new(n: usize, m: usize, cost: Vec<f64>) -> KBest {
        assert!(n <= 12 && cost.len() == n * n * m);
        // h[slot * m + r]: least cost to fill slots slot..n with orientations summing to r
        // (mod m), ignoring uniqueness.
        let mut h = vec![f64::INFINITY; (n + 1) * m];
        h[n * m] = 0.0;
        for slot in (0..n).rev() {
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
                    v = v.min(b + h[(slot + 1) * m + (r + m - o) % m]);
                }
                h[slot * m + r] = v;
            }
        }
        let mut order = Vec::with_capacity(n * m);
        for slot in 0..n {
            for ori_sum in 0..m {
                let mut v: Vec<Child> = (0..n)
                    .flat_map(|p| (0..m).map(move |o| (p, o)))
                    .filter_map(|(p, o)| {
                        let c = cost[(slot * n + p) * m + o];
                        let need = (2 * m - ori_sum - o) % m;
                        let delta = c + h[(slot + 1) * m + need];
                        delta.is_finite().then_some(Child {
                            piece: p as u8,
                            ori: o as u8,
                            cost: c,
                            delta,
                        })
                    })
                    .collect();
                v.sort_by(|a, b| a.delta.total_cmp(&b.delta));
                order.push(v);
            }
        }
        let h0 = h[0];
        let mut kb = KBest {
            n,
            m,
            order,
            heap: BinaryHeap::new(),
            expanded: 0,
            frontier: h0,
            exhausted: false,
        };
        let root = Node {
            f: 0.0,
            g: 0.0,
            slot: 0,
            used: 0,
            ori_sum: 0,
            parity: 0,
            next: 0,
            path: [(0, 0); 12],
        };
        kb.push_from(root, 0);
        kb
    }

    /// Pushes the entry for the first usable child at index ≥ `from` of `node`'s slot.
    fn push_from(&mut self, mut node: Node, from: usize) {
        let list = &self.order[node.slot as usize * self.m + node.ori_sum as usize];
        let mut k = from;
        while k < list.len() && node.used & (1 << list[k].piece) != 0 {
            k += 1;
        }
        if k < list.len() {
            node.next = k as u16;
            node.f = node.g + list[k].delta;
            self.heap.push(node);
        }
    }

    /// The next cheapest assignment, or `None` when there is none left or `budget` entries
    /// (in total) have been popped.
    pub fn next_solution(&mut self, budget: usize) -> Option<Assignment> {
        let (n, m) = (self.n, self.m);
        loop {
            if self.expanded >= budget {
                return None;
            }
            let Some(node) = self.heap.pop() else {
                self.exhausted = true;
                self.frontier = f64::INFINITY;
                return None;
            };
            self.expanded += 1;
            self.frontier = node.f;
            let slot = node.slot as usize;
            let child = self.order[slot * m + node.ori_sum as usize][node.next as usize];
            // The sibling.
            self.push_from(node.clone(), node.next as usize + 1);
            // The child.
            let p = child.piece as usize;
            let higher = (node.used >> (p + 1)).count_ones() as u8;
            let mut path = node.path;
            path[slot] = (child.piece, child.ori);
            let next = Node {
                f: 0.0,
                g: node.g + child.cost,
                slot: node.slot + 1,
                used: node.used | (1 << p),
                ori_sum: ((node.ori_sum as usize + child.ori as usize) % m) as u8,
                parity: (node.parity + higher) & 1,
                next: 0,
                path,
            };
            if slot + 1 == n {
                // h is finite only for a zero orientation sum here.
                return Some(Assignment {
                    cost: next.g,
                    pieces: path[..n].to_vec(),
                    parity: next.parity,
                });
            }
            self.push_from(next, 0);
        }
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
