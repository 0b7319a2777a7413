"""Version of the groundkit-core-judgments distribution."""

__version__ = "0.1.0"
