"""``grk eval compare``: items files, report stages, cost guardrails and the track record."""
