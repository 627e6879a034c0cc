//! Cost-aware two-phase search: finds solutions that are cheap under a caller-supplied
//! cost of *sequences* of face turns (a robot's execution time, say), not merely short.
//!
//! The cost is a small min-plus automaton ([`SequenceCost`]): after a face turn the
//! executor is in one of `K` states (for a turntable robot: which way the turned face
//! is heading, which way the table last moved); doing move `m` first costs `start[m][j]`
//! and ends in state `j`, doing `m` after `p` from state `i` costs `step[p][m][i][j]`.
//! The search is Kociemba's two-phase algorithm over the same tables as
//! the length search (`solver::search`) (three axes × the inverse problem as six variants), carrying along
//! every path the vector of cheapest costs per automaton state, and pruning a node when
//! that vector plus an exact lower bound on the cost of the moves still needed (at least
//! the phase-1 moves left, or the phase-2 distance, each priced by the automaton itself)
//! reaches the cheapest solution found so far. Unlike the length search it accepts
//! longer solutions when they are cheaper, allows both orders of commuting opposite
//! faces (their costs differ), tries the cheapest children first, and keeps finding
//! cheaper solutions until it has proved none is left (within the length limit) or its
//! time or node budget ends. The inverse problem is priced backwards (the automaton's
//! suffix costs), so both directions are searched under the same cost.
//!
//! Level: part of `solver`; depends on `cube` and on the solver's coordinates, move and
//! pruning tables. Must not depend on `color`, `scan`, `robot` or anything above: the
//! automaton is plain numbers, whoever priced it.
//!
//! Files: `automaton` ([`SequenceCost`]: the cost model, pricing and counting
//! sequences), `search` (the costed two-phase search itself); this file holds the options
//! and results and [`Solver::solve_costed`].

mod automaton;
mod search;
#[cfg(test)]
mod tests;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use automaton::{CostFloor, SequenceCost, MAX_STATES, MAX_SUMMARIES};
use search::Search;

use super::{Solver, SolverError};
use crate::cube::{Alg, Face, FaceletCube, Move, Size, Turn};

/// Budgets and limits of a costed search.
#[derive(Clone, Debug)]
pub struct CostedOptions {
    /// Longest solution considered (face turns).
    pub max_length: u32,
    /// Wall-clock budget.
    pub time_limit: Duration,
    /// Node budget (deterministic, whatever the machine's load); `None`: no limit.
    pub max_nodes: Option<u64>,
    /// Only solutions cheaper than this are wanted (e.g. the cost of a plan already in
    /// hand); `None`: any.
    pub bound: Option<f64>,
    /// How many of the cheapest solutions found to return.
    pub solutions: usize,
    /// Set by someone else to end the search early (it returns what it found so far), as
    /// its time budget would.
    pub cancel: Option<Arc<AtomicBool>>,
}

impl Default for CostedOptions {
    fn default() -> Self {
        CostedOptions {
            max_length: 24,
            time_limit: Duration::from_millis(1500),
            max_nodes: None,
            bound: None,
            solutions: 8,
            cancel: None,
        }
    }
}

/// A solution and its cost under the automaton.
#[derive(Clone, Debug, PartialEq)]
pub struct CostedSolution {
    pub alg: Alg,
    pub cost: f64,
}

/// What a costed search found.
#[derive(Clone, Debug)]
pub struct CostedOutcome {
    /// Cheapest first; empty when nothing beat the bound within the budget.
    pub solutions: Vec<CostedSolution>,
    /// Search nodes visited (phase 1 and phase 2).
    pub nodes: u64,
    pub phase2_nodes: u64,
    /// Phase-1 solutions reached (each priced for a phase-2 continuation).
    pub phase1_ends: u64,
    /// The phase-1 length the search had reached when it ended.
    pub phase1_length: u32,
    /// Each improvement: when (seconds since the start), its cost, its phase-1 length.
    pub improvements: Vec<(f64, f64, u32)>,
    /// True when the search ended because nothing cheaper can exist (within the length
    /// limit and the two-phase structure), not because a budget ran out.
    pub complete: bool,
    pub elapsed: Duration,
}

impl Solver {
    /// Solutions taking `start` to `target` (3x3x3, exactly) that are cheap under `cost`,
    /// cheapest first; every one is checked by applying it to the start.
    pub fn solve_costed(
        &self,
        start: &FaceletCube,
        target: &FaceletCube,
        cost: &SequenceCost,
        opts: &CostedOptions,
    ) -> Result<CostedOutcome, SolverError> {
        if start.size() != target.size() {
            return Err(SolverError::DifferentSizes {
                start: start.size(),
                target: target.size(),
            });
        }
        if start.size() != Size::Three {
            return Err(SolverError::CostModel {
                reason: "the costed search solves 3x3x3 cubes only".into(),
            });
        }
        let (s, t, y) = super::problem3(start, target)?;
        let t0 = Instant::now();
        let mut search = Search::new(&self.three, cost, opts, t0);
        search.run(&y);
        let mut solutions = Vec::with_capacity(search.found.len());
        for (c, moves) in &search.found {
            let alg = Alg::from_moves(
                moves
                    .iter()
                    .map(|&m| Move::face(Face::ALL[m as usize / 3], Turn::ALL[m as usize % 3]))
                    .collect(),
            );
            let reached = moves.iter().fold(s, |c, &m| {
                c.apply_face(Face::ALL[m as usize / 3], Turn::ALL[m as usize % 3])
            });
            if reached != t {
                return Err(SolverError::Internal {
                    moves: alg.to_string(),
                });
            }
            solutions.push(CostedSolution {
                alg,
                cost: *c as f64,
            });
        }
        Ok(CostedOutcome {
            solutions,
            nodes: search.nodes,
            phase2_nodes: search.nodes2,
            phase1_ends: search.ends,
            phase1_length: search.d1 as u32,
            improvements: search.improvements.clone(),
            complete: !search.stop,
            elapsed: t0.elapsed(),
        })
    }
}
