"""Loading a endpoint the caller may see, or 404 (``owned()`` in app/accounts/deps.py)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from app import access
from app.accounts.deps import owned
from app.models import SearchEndpoint

__all__ = ["EndpointDep", "WebEndpointDep"]

EndpointDep = Annotated[SearchEndpoint, Depends(owned(access.visible_endpoint, "endpoint_id"))]
WebEndpointDep = Annotated[
    SearchEndpoint, Depends(owned(access.visible_endpoint, "endpoint_id", page=True))
]
