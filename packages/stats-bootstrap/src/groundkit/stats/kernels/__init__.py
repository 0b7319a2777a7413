"""Fast exact kernels: resampled means, sign-flip counts, distribution functions."""
