//! A checkout-workflow MCP server that declares recovery metadata.
