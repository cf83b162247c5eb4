"""Deleting from the pages, always after a confirmation, written once for every kind of thing.

Each thing has a confirmation page (GET .../delete, works without JavaScript) whose form
posts to the same address. With htmx the delete buttons post straight away after the
browser's own confirm dialog (hx-confirm) and the answer redirects with HX-Redirect. The
handlers live with their domain (cases, queries, scorers, endpoints); this is their page.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request
from fastapi.responses import Response

from app.models import User
from app.web_common.redirects import see_other
from app.web_common.templating import is_htmx, render

__all__ = ["DeleteConfirmation", "confirm_page", "gone"]


@dataclass(frozen=True)
class DeleteConfirmation:
    """What a confirmation page shows: the thing, what goes with it, where to go back."""

    kind: str
    name: str
    consequence: str
    action: str
    back: str


def confirm_page(request: Request, user: User, doomed: DeleteConfirmation) -> Response:
    """Return the page that asks before deleting."""
    return render(request, "confirm_delete.html", {"user": user, "doomed": doomed})


def gone(request: Request, target: str) -> Response:
    """Send the browser to ``target`` after a delete (HX-Redirect for htmx)."""
    if is_htmx(request):
        return Response(status_code=200, headers={"HX-Redirect": target})
    return see_other(target)
