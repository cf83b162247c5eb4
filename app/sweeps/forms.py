"""The knob sweep form on the case page: the values to try, comma separated, per knob.

Its fields are ``sweep.<knob>``, one per knob of the case's template. A problem with one
knob's values is shown under that knob's box; a problem with the whole grid (nothing
typed, too many combinations) under the form.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import ClassVar, Self

from starlette.datastructures import FormData

from app.sweeps.schemas import SweepCreate
from app.web_common.forms import FormErrors, WebForm, field_text

__all__ = ["SWEEP_FIELD", "SWEEP_PREFIX", "SweepForm"]

SWEEP_PREFIX = "sweep."
# Where the errors of the grid as a whole go: the form's own message line.
SWEEP_FIELD = "sweep"
_SEPARATORS = re.compile(r"[,;]")


class SweepForm(WebForm):
    """The knob sweep form: reads every ``sweep.<knob>`` box, keeps the text to show again."""

    labels: ClassVar[Mapping[str, str]] = {"knobs": "A knob"}

    @classmethod
    def read(cls, form: FormData) -> Self:
        """Return the form with the posted text of every knob box."""
        return cls({key: field_text(form, key) for key in form if key.startswith(SWEEP_PREFIX)})

    def body(self) -> SweepCreate:
        """Return the grid to sweep; a value that is not a number is refused with its knob."""
        grid: dict[str, list[float]] = {}
        for key, raw in self.values.items():
            name = key.removeprefix(SWEEP_PREFIX)
            items = [item.strip() for item in _SEPARATORS.split(str(raw)) if item.strip()]
            bad = [item for item in items if not _finite(item)]
            if bad:
                self.fail(
                    key,
                    f"Knob {name}: {bad[0]!r} is not a number; "
                    "write the values to try separated by commas, e.g. 1, 5, 10.",
                )
            elif items:
                grid[name] = [float(item) for item in items]
        if not grid:
            if not self.errors:
                self.fail(
                    SWEEP_FIELD, "Type the values to try for at least one knob, e.g. 1, 5, 10."
                )
            raise FormErrors(dict(self.errors))
        return self.validate(SweepCreate, {"knobs": grid})

    def error_field(self, dotted: str) -> str:
        """A knob's problem (``knobs.<name>...``) belongs to its box, the grid's to the form."""
        if dotted.startswith(SWEEP_PREFIX):  # the form's own, already by box
            return dotted
        parts = dotted.split(".")
        if parts[0] == "knobs" and len(parts) > 1:
            return SWEEP_PREFIX + parts[1]
        return SWEEP_FIELD

    def _in_form_order(self) -> None:
        # The boxes come in the order they were posted, the page's; the form's line last.
        self.errors = dict(sorted(self.errors.items(), key=lambda e: e[0] == SWEEP_FIELD))


def _finite(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False
