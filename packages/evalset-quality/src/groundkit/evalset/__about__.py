"""Version of the groundkit-evalset-quality distribution."""

__version__ = "0.1.0"
