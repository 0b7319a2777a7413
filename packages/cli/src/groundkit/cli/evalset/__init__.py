"""``grk evalset`` beyond its click commands: rendering, the interactive review, gold candidates."""
