"""The JavaScript sandbox: worker processes that run users' scorers, and the pool of them.

``protocol`` is what parent and worker say to each other, ``worker`` the child process,
``process`` one worker seen from the parent, ``pool`` the parent's side, owned by whoever
runs scoring (see ``pool``'s docstring).
"""

from app.sandbox.pool import (
    CRASH_MESSAGE,
    WORKER_MESSAGE,
    JsPool,
    current_pool,
    in_scoring_thread,
    install_pool,
    score_javascript,
)
from app.sandbox.process import PoolSettings

__all__ = [
    "CRASH_MESSAGE",
    "WORKER_MESSAGE",
    "JsPool",
    "PoolSettings",
    "current_pool",
    "in_scoring_thread",
    "install_pool",
    "score_javascript",
]
