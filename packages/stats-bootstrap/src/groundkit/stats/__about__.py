"""Version of the groundkit-stats-bootstrap distribution."""

__version__ = "0.1.0"
