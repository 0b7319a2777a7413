"""The judges the CLI builds from ``--judge``, and the client of OpenAI-compatible endpoints."""
