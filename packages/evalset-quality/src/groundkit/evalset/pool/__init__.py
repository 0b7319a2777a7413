"""Pooled evaluation without gold: the pool, its stratified sample and the estimates."""

from groundkit.evalset.pool._estimate import estimate_pool, pool_passages, run_pool
from groundkit.evalset.pool._models import (
    POOL_FORMAT,
    POOL_VERSION,
    PoolComparison,
    PoolItem,
    PoolReport,
    PoolStage,
    PoolStratum,
)
from groundkit.evalset.pool._pool import (
    Pool,
    PoolEntry,
    StageRef,
    allocate,
    build_pool,
    draw_sample,
)

__all__ = [
    "POOL_FORMAT",
    "POOL_VERSION",
    "Pool",
    "PoolComparison",
    "PoolEntry",
    "PoolItem",
    "PoolReport",
    "PoolStage",
    "PoolStratum",
    "StageRef",
    "allocate",
    "build_pool",
    "draw_sample",
    "estimate_pool",
    "pool_passages",
    "run_pool",
]
