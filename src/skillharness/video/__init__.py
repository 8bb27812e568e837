"""video layer."""
