//! The mcp-recovery command line.
fn main() {}
