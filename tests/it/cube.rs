//! Integration tests: cube.
