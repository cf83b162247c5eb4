"""Hooks: named points where domains have work done, for whichever domain raises them.

A hook is declared by the code that raises it (runs declares ``RUN_ENDED``; the kernel
declares ``MINUTE``) with the type of the event its works are given. Domains add their work
at start-up, from their ``tasks.py``; adding a name again replaces its work. Calling a hook
does every work in the order added: one that raises is logged and the rest goes on, so the
caller (a run that ends, the minute's job) is never held up nor failed by a work.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

__all__ = ["Hook"]

log = logging.getLogger(__name__)
E = TypeVar("E")


class Hook(Generic[E]):
    """A point where work is done, each work given the event ``E``."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._works: dict[str, Callable[[E], Awaitable[object]]] = {}

    def add(self, name: str, work: Callable[[E], Awaitable[object]]) -> None:
        """Have ``work`` done each time the hook is called (replacing a work of that name)."""
        self._works[name] = work

    def remove(self, name: str) -> None:
        """Stop doing the work of that name (if any)."""
        self._works.pop(name, None)

    def names(self) -> list[str]:
        """The names of the works added, in the order they are done."""
        return list(self._works)

    async def __call__(self, event: E) -> None:
        """Do every work on the event; one that raises is logged and the rest goes on."""
        for name, work in list(self._works.items()):
            try:
                await work(event)
            except Exception:
                log.exception("the %s work of the %s hook failed", name, self.name)
