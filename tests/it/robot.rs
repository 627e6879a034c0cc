//! Integration tests: robot.
