//! Solvers: two-phase 3x3x3, optimal 2x2x2, from any state to any target.
//!
//! Level: depends on `cube` only. No printing; progress is reported through callbacks.
