"""Run the ``grk`` command line as ``python -m groundkit.cli``."""

from groundkit.cli import main

if __name__ == "__main__":
    main()
