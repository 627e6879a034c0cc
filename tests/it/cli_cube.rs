//! Integration tests: cli_cube.
