//! Solving within a job: the solver asked directly for candidate solutions from the
//! symmetric variants of the problem (and the inverse problem), each checked to reach the
//! target; then, for a robot with a cost model, the solver's robot-cost search for solutions
//! that are cheap for that robot (not merely short), bounded by the best plan in hand.
//!
//! Level: job (over `solver` and the robot's planner). No printing.

use std::time::Duration;

use crate::color::resolve::ResolveOptions;
use crate::cube::{Alg, FaceletCube, Size};
use crate::robot::mindcub3r::cost::RobotState;
use crate::robot::mindcub3r::frames::candidates;
use crate::robot::symmetry::{same_up_to_rotation, Symmetry};
use crate::solver::costed::CostedOptions;
use crate::solver::{SolveOptions, Solver, SolverError};

use super::error::RunError;
use super::options::RunOptions;
use super::robot::Planning;

/// Wall-clock limit of each solver call for candidates.
const SOLVE_TIMEOUT: Duration = Duration::from_secs(10);

/// What a job thinks with: the solver, the colour resolver's options, and how hard to search.
#[derive(Clone)]
pub struct Tools<'a> {
    pub solver: &'a Solver,
    pub resolve: ResolveOptions,
    /// Longest candidate solution asked of the solver (face turns).
    pub max_length: u32,
    /// The robot-cost search (3x3x3, robots with a cost model); its `bound` is set per
    /// problem; `None`: off, the robot executes the cheapest of the candidates.
    pub search: Option<CostedOptions>,
}

/// A cube as plain colours, without symbol names (the solver compares colours only).
pub(crate) fn plain(c: &FaceletCube) -> FaceletCube {
    FaceletCube::from_colors(c.size(), c.colors().to_vec()).expect("size")
}

/// Whether `alg` takes `start` to `target` (3x3x3: exactly; 2x2x2: up to a whole-cube
/// rotation, which it has no centres to fix).
fn reaches(start: &FaceletCube, alg: &Alg, target: &FaceletCube) -> bool {
    let mut c = start.clone();
    c.apply(alg).is_ok()
        && (if start.size() == Size::Three {
            c.colors() == target.colors()
        } else {
            same_up_to_rotation(&c, target)
        })
}

/// Solutions of `start → target` from the symmetric variants the options ask for, only
/// those that really reach the target (cheap insurance).
pub fn solve_candidates(
    tools: &Tools,
    start: &FaceletCube,
    target: &FaceletCube,
    opts: &RunOptions,
) -> Result<Vec<Alg>, RunError> {
    let (start, target) = (plain(start), plain(target));
    // Even a robot with fixed motors gains: the solver answers each variant differently.
    let mut syms = Symmetry::all(opts.mirror);
    if !opts.symmetries {
        syms.truncate(1);
    }
    let solve = |s: &FaceletCube, t: &FaceletCube, n: usize| -> Result<Vec<Alg>, SolverError> {
        tools.solver.solve(
            s,
            t,
            &SolveOptions {
                solutions: n,
                max_length: tools.max_length,
                timeout: Some(SOLVE_TIMEOUT),
                ..Default::default()
            },
        )
    };
    let cands = candidates(
        &start,
        &target,
        &syms,
        opts.inverse,
        opts.solutions.max(1),
        &solve,
    )?;
    let cands: Vec<Alg> = cands
        .into_iter()
        .filter(|a| reaches(&start, a, &target))
        .collect();
    if cands.is_empty() {
        return Err(RunError::NoCandidate);
    }
    Ok(cands)
}

/// `cands` plus what the robot-cost search finds cheaper than their best plan (each one
/// checked like the candidates); `cands` alone when the robot has no cost model, the cube
/// is not a 3x3x3 or the search is off. A failed search only means no extra candidates.
pub fn add_robot_cost_solutions(
    robot: &dyn Planning,
    tools: &Tools,
    start: &FaceletCube,
    target: &FaceletCube,
    plan_start: &RobotState,
    mut cands: Vec<Alg>,
) -> Result<Vec<Alg>, RunError> {
    let (Some(search), Some(cost), Size::Three) = (
        tools.search.as_ref(),
        robot.sequence_cost(plan_start),
        start.size(),
    ) else {
        return Ok(cands);
    };
    let bound = robot.plan(&cands, plan_start)?.seconds;
    let (start, target) = (plain(start), plain(target));
    let opts = CostedOptions {
        bound: Some(bound),
        ..search.clone()
    };
    if let Ok(out) = tools.solver.solve_costed(&start, &target, &cost, &opts) {
        for a in out.solutions.into_iter().map(|s| s.alg) {
            if reaches(&start, &a, &target) && !cands.contains(&a) {
                cands.push(a);
            }
        }
    }
    Ok(cands)
}
