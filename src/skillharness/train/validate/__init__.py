"""Validation: a candidate's paired test against the incumbent, its guard, and the val scores."""
