"""Version of the groundkit-diagnosis-fixes distribution."""

__version__ = "0.1.0"
