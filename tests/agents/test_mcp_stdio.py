"""`relevo mcp` on stdio, driven by the MCP SDK's own client through a whole tuning loop on
the embedded engine: list cases, propose two tries, compare them, apply the better one;
and the scopes, the attribution and the held-out report along the way."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from sqlalchemy import select

from app.cases import notes
from app.models import Case, Run, Try
from app.runs import service as run_service
from tests.agents.conftest import AgentWorld


@asynccontextmanager
async def _session(world: AgentWorld, key: str) -> AsyncIterator[ClientSession]:
    command, args, cwd = world.command
    params = StdioServerParameters(command=command, args=args, env=world.env(key), cwd=cwd)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


Call = Callable[..., Awaitable[Any]]


def _caller(session: ClientSession) -> tuple[Call, Call]:
    async def ok(name: str, **arguments: Any) -> Any:
        result = await session.call_tool(name, arguments)
        assert not result.is_error, result.content
        assert result.structured_content is not None
        # The structured content and its text twin say the same.
        assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
        return result.structured_content

    async def refused(name: str, **arguments: Any) -> str:
        result = await session.call_tool(name, arguments)
        assert result.is_error, result.structured_content
        text: str = result.content[0].text  # type: ignore[union-attr]
        return text

    return ok, refused


def test_a_tuning_loop_over_stdio(agent_world: AgentWorld) -> None:
    case_id = agent_world.case_id
    with agent_world.factory() as session:
        case = session.get(Case, case_id)
        assert case is not None
        try_before = case.current_try_number
        latest_before = run_service.latest_finished_run(session=session, case=case)
        assert latest_before is not None
        template_before = (
            session.scalars(select(Try).where(Try.case_id == case_id)).one().query_template
        )

    async def loop() -> dict[str, Any]:
        async with _session(agent_world, agent_world.keys["claude"]) as session:
            tools = await session.list_tools()
            names = {t.name for t in tools.tools}
            assert {
                "list_cases",
                "get_case",
                "list_runs",
                "get_run",
                "start_run",
                "compare_runs",
                "get_query_results",
                "search_documents",
                "rate",
                "propose_try",
                "apply_try",
                "start_sweep",
                "judge_estimate",
                "start_judge_run",
                "annotate",
            } <= names
            propose = next(t for t in tools.tools if t.name == "propose_try")
            assert propose.input_schema["required"] == ["case_id"]
            assert {"query_template", "knobs", "wait_s"} <= set(propose.input_schema["properties"])
            assert propose.output_schema is not None
            assert {"held_out", "tuning", "all", "run_id"} <= set(
                propose.output_schema["properties"]
            )
            assert all(t.output_schema is not None for t in tools.tools)
            ok, refused = _caller(session)

            listed = await ok("list_cases")
            assert [c["name"] for c in listed["cases"]] == ["Movies"]
            detail = await ok("get_case", case_id=case_id)
            query_ids = [q["id"] for q in detail["queries"]]
            held = detail["held_out_query_ids"]

            fuzzy = await ok("propose_try", case_id=case_id, knobs={"fuzziness": 1})
            acclaim = await ok("propose_try", case_id=case_id, knobs={"ratingWeight": 1})
            compared = await ok(
                "compare_runs",
                case_id=case_id,
                base_run_id=fuzzy["base_run_id"],
                other_run_id=fuzzy["run_id"],
            )
            between = await ok(
                "compare_runs",
                case_id=case_id,
                base_run_id=fuzzy["run_id"],
                other_run_id=acclaim["run_id"],
            )
            # Not waited for: the answer says so, and the runs go on.
            pending = await ok("propose_try", case_id=case_id, knobs={"titleBoost": 20}, wait_s=0)
            assert pending["status"] == "running" and pending["held_out"] is None
            assert f"other_run_id {pending['run_id']}" in pending["message"]
            for _ in range(600):
                run = await ok("get_run", case_id=case_id, run_id=pending["run_id"])
                if run["status"] == "finished":
                    break
                await asyncio.sleep(0.1)
            assert run["status"] == "finished" and run["query_template"] == template_before
            later = await ok(
                "compare_runs",
                case_id=case_id,
                base_run_id=pending["base_run_id"],
                other_run_id=pending["run_id"],
            )
            assert later["other"]["knobs"]["titleBoost"] == 20
            again = await ok("get_case", case_id=case_id)
            runs = await ok("list_runs", case_id=case_id)
            unknown = await refused("propose_try", case_id=case_id, knobs={"colour": 2})
            missing = await refused("get_case", case_id=999_999)
            better = (
                fuzzy
                if fuzzy["all"]["headline_delta"] > acclaim["all"]["headline_delta"]
                else acclaim
            )
            applied = await ok("apply_try", case_id=case_id, run_id=better["run_id"])
            twice = await refused("apply_try", case_id=case_id, run_id=latest_before.id)
            return {
                "query_ids": query_ids,
                "held": held,
                "fuzzy": fuzzy,
                "acclaim": acclaim,
                "compared": compared,
                "between": between,
                "again": again,
                "runs": runs,
                "unknown": unknown,
                "missing": missing,
                "better": better,
                "applied": applied,
                "twice": twice,
            }

    out = asyncio.run(loop())
    fuzzy, acclaim, applied = out["fuzzy"], out["acclaim"], out["applied"]

    # The held-out half: a fixed half of the queries, the same on every call and for both
    # proposals, reported apart from the other half.
    query_ids = out["query_ids"]
    assert len(out["held"]) == len(query_ids) // 2
    assert out["again"]["held_out_query_ids"] == out["held"]
    for report in (fuzzy, acclaim):
        assert report["status"] == "finished"
        assert report["held_out"]["query_ids"] == out["held"]
        assert sorted(report["held_out"]["query_ids"] + report["tuning"]["query_ids"]) == sorted(
            query_ids
        )
    # Each half's number is the mean of that half's per-query changes in the comparison.
    per_query = {
        q["query_id"]: q["delta"] for q in out["compared"]["queries"] if q["delta"] is not None
    }
    held_deltas = [per_query[q] for q in out["held"] if q in per_query]
    assert fuzzy["held_out"]["mean_delta"] == pytest.approx(sum(held_deltas) / len(held_deltas))
    tuning_deltas = [per_query[q] for q in fuzzy["tuning"]["query_ids"] if q in per_query]
    assert fuzzy["tuning"]["mean_delta"] == pytest.approx(sum(tuning_deltas) / len(tuning_deltas))
    # Fuzziness finds the misspelled queries' films: a real gain, on every metric reported.
    assert fuzzy["all"]["headline_delta"] == out["compared"]["headline_delta"] > 0
    assert fuzzy["all"]["verdict"] == out["compared"]["verdict"]
    assert [m["name"] for m in fuzzy["all"]["metrics"]] == ["NDCG@10"]
    assert fuzzy["held_out"]["metrics"][0]["name"] == "NDCG@10"
    assert fuzzy["draft"]["knobs"]["fuzziness"] == 1
    assert acclaim["draft"]["knobs"]["ratingWeight"] == 1
    # Both proposals are compared with the same run of the current try.
    assert fuzzy["base_run_id"] == acclaim["base_run_id"] == latest_before.id
    assert out["between"]["base"]["run_id"] == fuzzy["run_id"]

    # Refusals are tool errors with a sentence; the session went on after them.
    assert "no knob 'colour'" in out["unknown"]
    assert "No case with id 999999" in out["missing"]
    assert "not a proposed try" in out["twice"]

    # Proposing changed nothing of the case; applying made the better draft its new try.
    assert applied["new_try"] is True
    assert applied["try_number"] == try_before + 1
    better = out["better"]
    with agent_world.factory() as session:
        case = session.get(Case, case_id)
        assert case is not None
        assert case.current_try_number == try_before + 1
        new_try = session.scalars(
            select(Try).where(Try.case_id == case_id, Try.number == case.current_try_number)
        ).one()
        assert new_try.query_template == template_before
        assert new_try.knobs == better["draft"]["knobs"]
        latest = run_service.latest_finished_run(session=session, case=case)
        assert latest is not None and latest.id == applied["run_id"]
        assert latest.try_number == case.current_try_number
        assert latest.case_score == applied["case_score"]
        assert latest.case_score == pytest.approx(better["all"]["other_score"])

        # Attribution: every run the agent made says so, with the key's name.
        drafts = [session.get(Run, r["run_id"]) for r in (fuzzy, acclaim)]
        for run in [*drafts, latest]:
            assert run is not None
            assert (run.trigger, run.agent) == ("agent", "claude")
        assert all(r is not None and r.query_template == template_before for r in drafts)
        listed = {r["id"]: r for r in out["runs"]["runs"]}
        assert listed[fuzzy["run_id"]]["trigger"] == "agent"
        assert listed[fuzzy["run_id"]]["agent"] == "claude"
        assert listed[latest_before.id]["agent"] is None
        # ...and the case's annotations show what it did.
        timeline = notes.timeline(session=session, case=case)
        mine = [n for n in timeline if n.agent == "claude"]
        texts = [n.text for n in mine]
        assert sum(t.startswith("Agent claude: proposed a try") for t in texts) == 2
        assert f"Agent claude: applied the proposed try of run {better['run_id']} as try " in (
            "".join(texts)
        )
        assert {n.run_id for n in mine} >= {fuzzy["run_id"], acclaim["run_id"], latest.id}
        # The new try's own automatic note says what changed, as for any new try.
        autos = [n.text for n in timeline if n.auto]
        assert any(t.startswith(f"Try {try_before + 1}: ") for t in autos), autos


def test_scopes_refuse_by_name_over_stdio(agent_world: AgentWorld) -> None:
    case_id = agent_world.case_id

    async def calls(key: str, steps: list[tuple[str, dict[str, Any]]]) -> list[Any]:
        async with _session(agent_world, agent_world.keys[key]) as session:
            answers = []
            for name, arguments in steps:
                result = await session.call_tool(name, arguments)
                answers.append((result.is_error, result.content[0].text))  # type: ignore[union-attr]
            return answers

    reader = asyncio.run(
        calls(
            "reader",
            [
                ("get_case", {"case_id": case_id}),
                ("apply_try", {"case_id": case_id, "run_id": 1}),
                ("propose_try", {"case_id": case_id, "knobs": {"fuzziness": 1}}),
                (
                    "rate",
                    {"case_id": case_id, "query_id": 1, "ratings": [{"doc_id": "x", "rating": 3}]},
                ),
                ("start_judge_run", {"book_id": 1, "judge_id": 1, "budget_usd": 1.0}),
                ("judge_estimate", {"book_id": 1, "judge_id": 1}),
                ("list_runs", {"case_id": case_id}),
            ],
        )
    )
    assert reader[0][0] is False
    assert reader[1][0] and "needs the 'write' scope" in reader[1][1]
    assert "'reader' lacks" in reader[1][1] and "(its scopes: read)" in reader[1][1]
    assert reader[2][0] and "needs the 'run' scope" in reader[2][1]
    assert reader[3][0] and "needs the 'write' scope" in reader[3][1]
    assert reader[4][0] and "needs the 'judge' scope" in reader[4][1]
    assert reader[5][0] and "needs the 'judge' scope" in reader[5][1]
    assert reader[6][0] is False  # the session outlived every refusal
    judge = asyncio.run(
        calls("judge", [("start_judge_run", {"book_id": 1, "judge_id": 1})]),
    )
    assert judge[0][0] and "needs a budget" in judge[0][1]
    with agent_world.factory() as session:
        # Nothing was written by the refused calls: no run beyond the demo's first.
        assert len(session.scalars(select(Run)).all()) == 1


def test_a_bad_key_does_not_start(agent_world: AgentWorld) -> None:
    import subprocess

    command, args, cwd = agent_world.command
    env = {**agent_world.env("rlv_not-a-key"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [command, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 2
    assert "Invalid, revoked or expired API key" in done.stderr
    assert done.stdout == ""
