"""Loading a case's alert rule or annotation, or a webhook, or 404 (see app/accounts/deps.py)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from app.accounts.deps import owned
from app.cases.deps import CaseDep, WebCaseDep
from app.cases.notes import get_annotation
from app.models import Alert, Annotation, Webhook
from app.schedules.alerts import get_alert
from app.schedules.webhooks import visible_webhook

__all__ = ["AlertDep", "AnnotationDep", "WebAlertDep", "WebWebhookDep", "WebhookDep"]

AlertDep = Annotated[Alert, Depends(owned(get_alert, "alert_id", inside=("case", CaseDep)))]
WebAlertDep = Annotated[Alert, Depends(owned(get_alert, "alert_id", inside=("case", WebCaseDep)))]
AnnotationDep = Annotated[
    Annotation, Depends(owned(get_annotation, "annotation_id", inside=("case", CaseDep)))
]
WebhookDep = Annotated[Webhook, Depends(owned(visible_webhook, "webhook_id"))]
WebWebhookDep = Annotated[Webhook, Depends(owned(visible_webhook, "webhook_id", page=True))]
