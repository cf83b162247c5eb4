"""Uploaded files: the raw request body or the multipart field `file`, of any size."""

from __future__ import annotations

import tempfile
from typing import IO

from fastapi import Request
from starlette.datastructures import UploadFile

from app.errors import BadRequest

__all__ = ["spool_upload", "spooled_body", "upload_bytes"]

IN_MEMORY_BYTES = 8 * 1024 * 1024  # a larger upload goes to a temporary file
CHUNK_BYTES = 1024 * 1024
NO_FILE = 'Send the file as the multipart field "file" (or as the request body).'


async def _file_field(request: Request) -> UploadFile:
    form = await request.form()
    upload = form.get("file")
    if not isinstance(upload, UploadFile):
        raise BadRequest(NO_FILE)
    return upload


def _is_multipart(request: Request) -> bool:
    return request.headers.get("content-type", "").startswith("multipart/form-data")


async def spool_upload(upload: UploadFile) -> IO[bytes]:
    """Return an uploaded file's bytes in a rewound spooled file; the caller closes it."""
    spool = tempfile.SpooledTemporaryFile(max_size=IN_MEMORY_BYTES)  # noqa: SIM115
    while chunk := await upload.read(CHUNK_BYTES):
        spool.write(chunk)
    spool.seek(0)
    return spool


async def spooled_body(request: Request) -> IO[bytes]:
    """Return the upload (raw body, or the multipart field `file`) in a rewound spooled file."""
    if _is_multipart(request):
        return await spool_upload(await _file_field(request))
    spool = tempfile.SpooledTemporaryFile(max_size=IN_MEMORY_BYTES)  # noqa: SIM115
    async for chunk in request.stream():
        spool.write(chunk)
    spool.seek(0)
    return spool


async def upload_bytes(request: Request) -> bytes:
    """Return the uploaded file: the request body, or the multipart field `file`."""
    if _is_multipart(request):
        return await (await _file_field(request)).read()
    return await request.body()
