"""Diagnosis: from a step's failures to case packs of diagnosed spans, per edit target."""
