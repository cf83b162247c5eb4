"""Click logs over the API: the log, UBI queries and events sent to it, its summary."""

from __future__ import annotations

from typing import IO, Annotated

from fastapi import APIRouter, Query, Request, Response
from starlette.concurrency import run_in_threadpool

from app import access
from app.accounts.deps import CurrentUser
from app.cases.deps import CaseDep
from app.clicks import flows, ingest, judging, pull, samples, service, slices
from app.clicks import pages as page_data
from app.clicks.deps import ClickLogDep, PullManagerDep
from app.clicks.schemas import (
    ClickLogCreate,
    ClickLogRead,
    ClickLogSummary,
    ClickLogUpdate,
    ClickSlices,
    EstimateQuery,
    FromLogBody,
    FromLogRead,
    IngestResult,
    JudgementsBody,
    JudgementsEstimate,
    JudgementsResult,
    PullBody,
    PullResult,
    SampleBody,
    SampleRead,
    SlicesQuery,
)
from app.errors import Invalid, NotFound
from app.models import ClickLog
from app.web_common.deps import SessionDep
from app.web_common.owned import Owned, OwnedSchemas, OwnedService, RouteDocs, add_owned_routes
from app.web_common.uploads import spooled_body

router = APIRouter(tags=["click logs"])

# The paths the body limit middleware lets carry a large upload (RELEVO_MAX_UPLOAD_MB).
INGEST_PATH = r"/api/v1/click-logs/[0-9]+/(queries|events)"
NDJSON_TYPES = ("ndjson", "jsonl", "jsonlines", "json-seq")


add_owned_routes(
    router,
    Owned("log", "logs", "/click-logs/{click_log_id}", user=CurrentUser, item=ClickLogDep),
    OwnedSchemas(read=ClickLogRead, create=ClickLogCreate, update=ClickLogUpdate),
    OwnedService(
        service.to_read,
        service.list_logs,
        service.create_log,
        service.update_log,
        service.delete_log,
    ),
    RouteDocs(
        list="Return the click logs the caller may see.",
        create="Create a click log.",
        get="Return a click log.",
        update=(
            "Rename a log, change its position base or (its owner only) who it is shared with."
        ),
        delete="Delete a click log with its queries and events (its owner only).",
    ),
)


@router.get("/click-logs/{click_log_id}/summary", response_model=ClickLogSummary)
def summary(log: ClickLogDep, session: SessionDep) -> ClickLogSummary:
    """Return the log's counts, actions, dates and where its impressions come from."""
    return service.summary(session=session, log=log)


@router.get("/click-logs/{click_log_id}/slices", response_model=ClickSlices)
def query_slices(
    log: ClickLogDep, params: Annotated[SlicesQuery, Query()], session: SessionDep
) -> ClickSlices:
    """List the log's zero-result queries and its queries of low click-through."""
    return slices.slices(session=session, log=log, body=params)


@router.get("/click-logs/{click_log_id}/judgements/estimate", response_model=JudgementsEstimate)
def judgements_estimate(
    log: ClickLogDep, params: Annotated[EstimateQuery, Query()], session: SessionDep
) -> JudgementsEstimate:
    """Say how many pairs a judgement would judge with this minimum of impressions."""
    return judging.estimate(session=session, log=log, body=params)


@router.post(
    "/click-logs/{click_log_id}/judgements", response_model=JudgementsResult, status_code=202
)
def judgements(
    log: ClickLogDep, body: JudgementsBody, user: CurrentUser, session: SessionDep
) -> JudgementsResult:
    """Fit a click model to the log and write its judgements into a book as a clicks rater."""
    book = access.visible_book(session=session, user=user, book_id=body.book_id)
    return judging.judge(session=session, log=log, book=book, body=body)


@router.post("/click-logs/{click_log_id}/pull", response_model=PullResult, status_code=202)
def pull_from_engine(
    log: ClickLogDep,
    body: PullBody,
    user: CurrentUser,
    session: SessionDep,
    manager: PullManagerDep,
    request: Request,
    response: Response,
) -> PullResult:
    """Start reading an OpenSearch or Elasticsearch endpoint's UBI indexes into the log.

    Answers at once with the pull "queued"; poll `poll_url` for its progress. 409 while
    another pull of the log is under way.
    """
    endpoint = access.visible_endpoint(
        session=session, user=user, endpoint_id=body.search_endpoint_id
    )
    poll_url = str(request.url_for("get_pull", click_log_id=log.id))
    state = pull.start(session=session, log=log, endpoint=endpoint, body=body, poll_url=poll_url)
    pull.launch_after_commit(session, manager, click_log_id=log.id, pull_id=state.id)
    response.headers["Location"] = poll_url
    return state


@router.get("/click-logs/{click_log_id}/pull", response_model=PullResult, name="get_pull")
def get_pull(log: ClickLogDep) -> PullResult:
    """Return the log's last pull: under way ("queued", "running") or ended; 404 if none."""
    state = pull.current_pull(log)
    if state is None:
        raise NotFound("This click log has not been pulled yet.")
    return state


@router.get(
    "/pages/click-logs", response_model=page_data.ClickLogsPage, name="click_logs_page_json"
)
def click_logs_page(user: CurrentUser, session: SessionDep) -> page_data.ClickLogsPage:
    """Return the data of the click logs page."""
    return page_data.click_logs_page(session=session, user=user)


@router.get(
    "/pages/click-logs/{click_log_id}",
    response_model=page_data.ClickLogPage,
    name="click_log_page_json",
)
def click_log_page(
    log: ClickLogDep, user: CurrentUser, session: SessionDep
) -> page_data.ClickLogPage:
    """Return the data of a click log's page."""
    return page_data.click_log_page(session=session, log=log, user=user)


@router.post("/click-logs/{click_log_id}/sample", response_model=SampleRead)
def sample(log: ClickLogDep, body: SampleBody, session: SessionDep) -> SampleRead:
    """Draw a seeded sample of the log's queries, each with its inclusion probability."""
    return samples.sample(session=session, log=log, body=body)


@router.post("/cases/{case_id}/queries/from-log", response_model=FromLogRead)
def add_from_log(
    case: CaseDep, body: FromLogBody, user: CurrentUser, session: SessionDep
) -> FromLogRead:
    """Add a sample of a click log's queries to the case, weighted by their design weights."""
    log = service.get_log(session=session, user=user, click_log_id=body.click_log_id)
    return flows.add_sample_to_case(session=session, case=case, log=log, body=body)


@router.post("/click-logs/{click_log_id}/queries", response_model=IngestResult)
async def add_queries(log: ClickLogDep, session: SessionDep, request: Request) -> IngestResult:
    """Store UBI query records: one, a JSON array, or NDJSON; bad ones refused by line."""
    return await _ingest(log, session, request, "queries")


@router.post("/click-logs/{click_log_id}/events", response_model=IngestResult)
async def add_events(log: ClickLogDep, session: SessionDep, request: Request) -> IngestResult:
    """Store UBI event records: one, a JSON array, or NDJSON; bad ones refused by line."""
    return await _ingest(log, session, request, "events")


async def _ingest(
    log: ClickLog, session: SessionDep, request: Request, kind: service.Kind
) -> IngestResult:
    content_type = request.headers.get("content-type", "").lower()
    ndjson = any(name in content_type for name in NDJSON_TYPES)
    raw: IO[bytes] = await spooled_body(request)

    def work() -> IngestResult:
        try:
            records = ingest.read_records(raw, ndjson=ndjson)
            return service.ingest_records(session=session, log=log, kind=kind, records=records)
        except ingest.BadRecord as exc:
            raise Invalid("body", str(exc)) from exc
        finally:
            raw.close()

    return await run_in_threadpool(work)
