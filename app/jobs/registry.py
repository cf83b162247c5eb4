"""What jobs are: the tasks domains register, the job a task is given, the minute's hook.

A domain registers its tasks from its ``tasks.py`` (``register_task``) and its periodic
work on ``MINUTE``; the process that hosts jobs (a worker, or the web app without a queue)
gives them a ``Job``: the database, the ``Resources`` it provides (a worker's HTTP client,
how runs are started here) and the queue the job came from (None without one).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar, cast

from sqlalchemy.orm import Session, sessionmaker

from app.jobs.hooks import Hook

__all__ = [
    "MINUTE",
    "Deferrer",
    "Job",
    "Resource",
    "Resources",
    "TaskSpec",
    "TaskWork",
    "register_task",
    "registered_tasks",
]

T = TypeVar("T")
# A task's work: ``async def work(job: Job, **args)``, its arguments JSON values.
TaskWork = Callable[..., Awaitable[None]]


class Resource(Generic[T]):
    """The typed name of something a host gives its jobs (declared by the domain using it)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Resource({self.name!r})"


class Resources:
    """What a host gives its jobs, by ``Resource``."""

    def __init__(self) -> None:
        self._values: dict[Resource[Any], object] = {}

    def put(self, key: Resource[T], value: T) -> None:
        """Give jobs ``value`` under ``key``."""
        self._values[key] = value

    def find(self, key: Resource[T]) -> T | None:
        """Return what is given under ``key``, or None."""
        return cast("T | None", self._values.get(key))

    def get(self, key: Resource[T]) -> T:
        """Return what is given under ``key``; LookupError if this host gives none."""
        if key not in self._values:
            raise LookupError(f"This process gives jobs no {key.name}.")
        return cast(T, self._values[key])


class Deferrer(Protocol):
    """A queue, as far as jobs put more jobs in it."""

    async def defer(self, task: str, /, **args: Any) -> None: ...

    async def defer_many(self, task: str, jobs: Sequence[Mapping[str, Any]]) -> None: ...

    async def defer_in(self, task: str, seconds: float, /, **args: Any) -> None: ...


@dataclass
class Job:
    """What a task or a periodic work is given by the process that does it."""

    session_factory: sessionmaker[Session]
    resources: Resources = field(default_factory=Resources)
    queue: Deferrer | None = None  # None: done in this process, without a queue


@dataclass(frozen=True)
class TaskSpec:
    """A task: its name in the queue, its work, and how often it is tried (None: once)."""

    name: str
    work: TaskWork
    attempts: int | None = None


_tasks: dict[str, TaskSpec] = {}
# Once a minute: by one worker with a queue (one job per minute, whatever the number of
# workers), else by the web app's ticker.
MINUTE: Hook[Job] = Hook("minute")


def register_task(name: str, work: TaskWork, *, attempts: int | None = None) -> None:
    """Have the queue's workers do ``work`` for jobs of task ``name`` (again: replaced)."""
    _tasks[name] = TaskSpec(name=name, work=work, attempts=attempts)


def registered_tasks() -> list[TaskSpec]:
    """The tasks registered, in the order they were."""
    return list(_tasks.values())
