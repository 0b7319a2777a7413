"""Verdicts: every paired comparison alone or as a family, with family-wise control."""
