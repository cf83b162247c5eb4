"""bound secrets: every sealed value bound to its row and column; URL credentials sealed

Sealed values become ``sealed:v2:`` (AES-GCM whose associated data is the table, column, row
id and header name, app/secret_box/), so a value copied elsewhere opens nowhere: this
revision re-seals the ``sealed:v1:`` values (and any plaintext left) of every column that
holds secrets. Values no configured key opens are left as they are; ``relevo secrets
rotate`` re-seals them once their key is back (they still open meanwhile).

``user:password@`` in a judge's base URL moves into its sealed headers (as the
``Authorization: Basic`` header the URL made), and in a webhook's URL into the new sealed
``webhooks.basic_auth``. The downgrade puts webhooks' credentials back into their URLs and
stores ``sealed:v1:`` values again, for code that cannot read the bound form.

Revision ID: 0020_secrets
Revises: 0019
Create Date: 2026-11-28
"""

import base64
from collections.abc import Sequence
from typing import Any

import httpx
import sqlalchemy as sa
from alembic import op

from app.secret_box import SealedColumn, SecretUnreadable, current_keyring, reseal_column

revision: str = "0020_secrets"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Spelled out here (not taken from the registry): the columns holding secrets at this revision.
_COLUMNS = (
    SealedColumn("search_endpoints", "headers", kind="json_values"),
    SealedColumn("search_endpoints", "basic_auth"),
    SealedColumn("judges", "api_key_sealed"),
    SealedColumn("judges", "headers", kind="json_values"),
    SealedColumn("webhooks", "secret"),
    SealedColumn("webhooks", "basic_auth"),
)
_JSON = sa.JSON().with_variant(sa.dialects.postgresql.JSONB(), "postgresql")
_judges = sa.table(
    "judges",
    sa.column("id", sa.Integer),
    sa.column("base_url", sa.Text),
    sa.column("headers", _JSON),
)
_webhooks = sa.table(
    "webhooks",
    sa.column("id", sa.Integer),
    sa.column("url", sa.String),
    sa.column("basic_auth", sa.Text),
)


def _split(url: str) -> tuple[str, str | None]:
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        return url, None
    if not parsed.userinfo:
        return url, None
    return str(parsed.copy_with(username=None, password=None)), (
        f"{parsed.username}:{parsed.password}"
    )


def upgrade() -> None:
    op.add_column("webhooks", sa.Column("basic_auth", sa.Text(), nullable=True))
    connection = op.get_bind()
    for judge_id, base_url, headers in connection.execute(
        sa.select(_judges.c.id, _judges.c.base_url, _judges.c.headers)
    ).all():
        clean, credentials = _split(base_url)
        if credentials is None:
            continue
        kept: dict[str, Any] = {
            k: v for k, v in (headers or {}).items() if k.lower() != "authorization"
        }
        # The URL's credentials were sent as this header (they won over any other).
        kept["Authorization"] = "Basic " + base64.b64encode(credentials.encode()).decode()
        connection.execute(
            sa.update(_judges)
            .where(_judges.c.id == judge_id)
            .values(base_url=clean, headers=kept)  # sealed below
        )
    for webhook_id, url in connection.execute(sa.select(_webhooks.c.id, _webhooks.c.url)).all():
        clean, credentials = _split(url)
        if credentials is not None:
            connection.execute(
                sa.update(_webhooks)
                .where(_webhooks.c.id == webhook_id)
                .values(url=clean, basic_auth=credentials)  # sealed below
            )
    for spec in _COLUMNS:
        reseal_column(connection, spec, mode="reseal")


def downgrade() -> None:
    connection = op.get_bind()
    for spec in _COLUMNS:
        # A value no configured key opens stays as it is (and is useless to older code).
        reseal_column(connection, spec, mode="legacy")
    for webhook_id, url, sealed in connection.execute(
        sa.select(_webhooks.c.id, _webhooks.c.url, _webhooks.c.basic_auth).where(
            _webhooks.c.basic_auth.is_not(None)
        )
    ).all():
        try:
            credentials = current_keyring().unseal(
                sealed, place=SealedColumn("webhooks", "basic_auth").place(webhook_id)
            )
        except SecretUnreadable:
            continue  # lost with the column: older code has nowhere to keep it
        user, _, password = credentials.partition(":")
        with_credentials = httpx.URL(url).copy_with(username=user, password=password)
        connection.execute(
            sa.update(_webhooks)
            .where(_webhooks.c.id == webhook_id)
            .values(url=str(with_credentials))
        )
    with op.batch_alter_table("webhooks") as batch:
        batch.drop_column("basic_auth")
