"""Version of the groundkit-cli distribution."""

__version__ = "0.1.0"
