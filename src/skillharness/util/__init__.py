"""Small shared utilities with no knowledge of the domain."""
