"""The click commands of ``grk``, one module per command or command group."""
