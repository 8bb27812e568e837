"""Preflight: everything a run needs, checked before it spends a call."""
