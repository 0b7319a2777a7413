"""Tests and intervals: bootstrap, sign-flip, exact binomial and McNemar, Wilson, betting, power."""
