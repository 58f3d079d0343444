//! Validation of tools/list documents.
