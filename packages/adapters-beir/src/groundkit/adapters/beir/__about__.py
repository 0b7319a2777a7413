"""Version of the groundkit-adapters-beir distribution."""

__version__ = "0.1.0"
