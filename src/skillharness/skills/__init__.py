"""skills layer."""
