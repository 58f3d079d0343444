//! JSON Schema generation.
