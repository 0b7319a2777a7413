"""What ``grk eval run`` does beyond its click command.

Its options, the config built from its flags, the run itself, and ``--describe``.
"""
