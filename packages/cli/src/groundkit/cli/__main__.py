"""Run the ``grk`` command line as ``python -m groundkit.cli``."""

import sys

try:
    from groundkit.cli import main
except KeyboardInterrupt:  # Ctrl-C while the command is still loading: exit as for Ctrl-C
    sys.stderr.write("error: interrupted (Ctrl-C) while starting; nothing was written\n")
    sys.exit(130)

if __name__ == "__main__":
    main()
