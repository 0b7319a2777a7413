"""Fast exact kernels: resampled means, sign-flip counts, distribution functions.

Also the one count of the cores a process may use (:func:`available_cores`), which every
parallel part of groundkit starts from.
"""

from groundkit.stats.kernels._cores import allowed_processors, available_cores, cgroup_cpu_limit

__all__ = ["allowed_processors", "available_cores", "cgroup_cpu_limit"]
