//! The demo server binary.
fn main() {}
