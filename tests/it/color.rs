//! Integration tests: color.
