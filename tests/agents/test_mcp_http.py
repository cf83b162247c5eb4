"""MCP over streamable HTTP at /mcp on the app (a real port), with API keys as bearer
tokens, driven by the SDK's own client; and scopes on the REST API with the same keys."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from bs4 import BeautifulSoup
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from sqlalchemy import select

from app.demo.setup import DEMO_EMAIL, DEMO_PASSWORD
from app.models import Case, Rating, Run, Sweep
from tests.agents.conftest import AgentWorld, LiveApp


@asynccontextmanager
async def _session(app: LiveApp, key: str) -> AsyncIterator[ClientSession]:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    async with (
        http,
        streamable_http_client(f"{app.url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def _call(session: ClientSession, name: str, **arguments: Any) -> tuple[bool, Any]:
    result = await session.call_tool(name, arguments)
    if result.is_error:
        return True, result.content[0].text  # type: ignore[union-attr]
    return False, result.structured_content


def test_a_tuning_loop_over_http(agent_world: AgentWorld, live_app: LiveApp) -> None:
    case_id = agent_world.case_id

    async def loop() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with _session(live_app, agent_world.keys["claude"]) as session:
            out["cases"] = await _call(session, "list_cases")
            out["first"] = await _call(
                session, "propose_try", case_id=case_id, knobs={"fuzziness": 2}
            )
            out["second"] = await _call(
                session, "propose_try", case_id=case_id, knobs={"fuzziness": 1}
            )
            first, second = out["first"][1], out["second"][1]
            out["compare"] = await _call(
                session,
                "compare_runs",
                case_id=case_id,
                base_run_id=first["run_id"],
                other_run_id=second["run_id"],
            )
            better = max((first, second), key=lambda r: r["all"]["headline_delta"])
            out["better"] = better
            out["results"] = await _call(
                session, "get_query_results", case_id=case_id, query_id=1, run_id=better["run_id"]
            )
            doc = out["results"][1]["docs"][0]["id"]
            out["rate"] = await _call(
                session,
                "rate",
                case_id=case_id,
                query_id=1,
                ratings=[{"doc_id": doc, "rating": 1}],
            )
            out["note"] = await _call(
                session, "annotate", case_id=case_id, text="fuzziness 1 looks best"
            )
            out["apply"] = await _call(
                session, "apply_try", case_id=case_id, run_id=better["run_id"]
            )
            out["search"] = await _call(
                session, "search_documents", case_id=case_id, query_text="godfater", rows=3
            )
            out["run"] = await _call(session, "start_run", case_id=case_id, wait_s=120)
            out["detail"] = await _call(
                session, "get_run", case_id=case_id, run_id=out["run"][1]["run"]["id"]
            )
            out["sweep"] = await _call(
                session, "start_sweep", case_id=case_id, knobs={"titleBoost": [5, 20]}
            )
        async with _session(live_app, agent_world.keys["reader"]) as session:
            out["read_apply"] = await _call(
                session, "apply_try", case_id=case_id, run_id=out["first"][1]["run_id"]
            )
            out["read_case"] = await _call(session, "get_case", case_id=case_id)
        return out

    out = asyncio.run(loop())
    for name in ("cases", "first", "second", "compare", "results", "rate", "note", "apply"):
        assert out[name][0] is False, (name, out[name][1])
    first, second, better = out["first"][1], out["second"][1], out["better"]
    assert [c["id"] for c in out["cases"][1]["cases"]] == [case_id]
    # The held-out half is the same over HTTP as on every call.
    assert first["held_out"]["query_ids"] == second["held_out"]["query_ids"]
    assert out["compare"][1]["base"]["run_id"] == first["run_id"]
    assert out["compare"][1]["other"]["run_id"] == second["run_id"]
    assert out["compare"][1]["verdict"] in {
        "better",
        "worse",
        "no_evidence",
        "tests_disagree",
        "too_few",
    }
    assert out["rate"][1]["ratings"] == sorted(out["rate"][1]["ratings"], key=lambda r: r["doc_id"])
    assert {"doc_id": out["results"][1]["docs"][0]["id"], "rating": 1.0} in out["rate"][1][
        "ratings"
    ]
    assert out["apply"][1]["new_try"] is True
    assert out["apply"][1]["case"]["knobs"] == better["draft"]["knobs"]
    assert better["draft"]["knobs"]["fuzziness"] in (1, 2)
    assert out["search"][0] is False and out["search"][1]["error"] is None
    assert out["search"][1]["docs"] and len(out["search"][1]["docs"]) <= 3
    assert out["sweep"][0] is False and out["sweep"][1]["agent"] == "claude"
    # start_run waits for its run: the new try's, the agent's.
    run = out["run"][1]
    assert run["ended"] is True and run["run"]["status"] == "finished"
    assert (run["run"]["trigger"], run["run"]["agent"], run["run"]["try_number"]) == (
        "agent",
        "claude",
        2,
    )
    assert (
        len(out["detail"][1]["queries"])
        == run["run"]["total"]
        == len(first["held_out"]["query_ids"]) + len(first["tuning"]["query_ids"])
    )
    # A read key reads, and cannot apply: the refusal names the scope.
    assert out["read_case"][0] is False
    assert out["read_apply"][0] and "needs the 'write' scope" in out["read_apply"][1]
    assert out["note"][1]["agent"] == "claude"
    assert out["note"][1]["text"] == "Agent claude: fuzziness 1 looks best"

    with agent_world.factory() as session:
        case = session.get(Case, case_id)
        assert case is not None
        assert case.current_try_number == 2
        rating = session.scalars(
            select(Rating).where(
                Rating.query_id == 1, Rating.doc_id == out["results"][1]["docs"][0]["id"]
            )
        ).one()
        assert (rating.rating, rating.agent) == (1.0, "claude")
    # Rated again through the REST API (not by an agent), it is no longer the agent's.
    with httpx.Client(base_url=live_app.url, timeout=60) as http:
        put = http.put(
            f"/api/v1/cases/{case_id}/queries/1/ratings",
            headers={"Authorization": f"Bearer {agent_world.keys['claude']}"},
            json={"ratings": [{"doc_id": rating.doc_id, "rating": 2}]},
        )
        assert put.status_code == 200
    with agent_world.factory() as session:
        again = session.scalars(
            select(Rating).where(Rating.query_id == 1, Rating.doc_id == rating.doc_id)
        ).one()
        assert (again.rating, again.agent) == (2.0, None)
    with agent_world.factory() as session:
        sweep = session.get(Sweep, out["sweep"][1]["id"])
        assert sweep is not None and sweep.agent == "claude"
        agent_runs = session.scalars(select(Run).where(Run.agent == "claude")).all()
        assert {r.id for r in agent_runs} >= {first["run_id"], second["run_id"]}
        assert all(r.trigger == "agent" for r in agent_runs)

    # The case's history shows the agent's runs and notes as such, to the person watching.
    with httpx.Client(base_url=live_app.url, timeout=60) as browser:
        login = BeautifulSoup(browser.get("/login").text, "html.parser")
        token = login.select_one("input[name=csrf_token]")
        assert token is not None
        signed_in = browser.post(
            "/login",
            data={
                "email": DEMO_EMAIL,
                "password": DEMO_PASSWORD,
                "csrf_token": str(token["value"]),
                "next": "/",
            },
        )
        assert signed_in.status_code in (200, 303)
        history = BeautifulSoup(browser.get(f"/cases/{case_id}/history").text, "html.parser")
    row = history.select_one(f'tr[data-run-id="{first["run_id"]}"]')
    assert row is not None
    marker = row.select_one(".run-agent")
    assert marker is not None and marker.get_text(" ", strip=True) == "agent · claude · draft"
    assert any(
        n.get_text().startswith("Agent claude: proposed a try") for n in row.select(".agent-note")
    )


def test_http_needs_a_live_key_and_rest_honours_scopes(
    agent_world: AgentWorld, live_app: LiveApp
) -> None:
    case_id = agent_world.case_id
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    accept = {"Accept": "application/json, text/event-stream"}
    with httpx.Client(base_url=live_app.url, timeout=60) as http:
        bare = http.post("/mcp", json=init, headers=accept)
        assert bare.status_code == 401
        assert "API key" in bare.json()["detail"]
        wrong = http.post("/mcp", json=init, headers={**accept, "Authorization": "Bearer rlv_x"})
        assert wrong.status_code == 401

        reader = {"Authorization": f"Bearer {agent_world.keys['reader']}"}
        claude = {"Authorization": f"Bearer {agent_world.keys['claude']}"}
        assert http.get(f"/api/v1/cases/{case_id}", headers=reader).status_code == 200
        run = http.post(f"/api/v1/cases/{case_id}/runs", headers=reader)
        assert run.status_code == 403
        assert run.json()["detail"] == "This API key lacks the 'run' scope (its scopes: read)."
        patch = http.patch(f"/api/v1/cases/{case_id}", headers=reader, json={"name": "Mine"})
        assert patch.status_code == 403 and "'write' scope" in patch.json()["detail"]
        judge = http.post(
            "/api/v1/books/1/judge-runs", headers=claude, json={"judge_id": 1, "budget_usd": 1}
        )
        assert judge.status_code == 403 and "'judge' scope" in judge.json()["detail"]
        # The same keys, with the scope: a run of the case starts.
        started = http.post(f"/api/v1/cases/{case_id}/runs?wait=true", headers=claude)
        assert started.status_code == 200 and started.json()["status"] == "finished"
        assert started.json()["trigger"] == "api"
        keys = http.get("/api/v1/api-keys", headers=reader).json()
        assert {k["name"]: k["scopes"] for k in keys} == {
            "claude": ["read", "run", "write"],
            "reader": ["read"],
            "judge": ["read", "judge"],
        }


def test_relevo_mcp_with_url_relays_stdio_to_the_server(
    agent_world: AgentWorld, live_app: LiveApp
) -> None:
    from mcp.client.stdio import StdioServerParameters, stdio_client

    command, args, cwd = agent_world.command

    async def relay(key: str) -> tuple[list[str], Any, tuple[bool, Any]]:
        # No database here: the server at --url does everything.
        env = {"RELEVO_API_KEY": key, "RELEVO_DATA_DIR": str(agent_world.settings.data_dir)}
        params = StdioServerParameters(
            command=command, args=[*args, "--url", live_app.url], env=env, cwd=cwd
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = [t.name for t in (await session.list_tools()).tools]
            case = await _call(session, "get_case", case_id=agent_world.case_id)
            refused = await _call(session, "apply_try", case_id=agent_world.case_id, run_id=1)
            return tools, case, refused

    tools, case, refused = asyncio.run(relay(agent_world.keys["reader"]))
    assert "propose_try" in tools and "apply_try" in tools
    assert case[0] is False and case[1]["case"]["id"] == agent_world.case_id
    assert refused[0] is True and "needs the 'write' scope" in refused[1]
    assert "'reader' lacks" in refused[1]


def test_a_judge_key_estimates_and_starts_a_budgeted_judge_run(
    agent_world: AgentWorld, live_app: LiveApp
) -> None:
    from tests.judges.fake_llm import fake_llm

    writer = {"Authorization": f"Bearer {agent_world.keys['claude']}"}
    with fake_llm() as llm, httpx.Client(base_url=live_app.url, timeout=60) as http:
        book = http.post(
            "/api/v1/books", headers=writer, json={"name": "Movies", "scale": [0, 1, 2, 3]}
        ).json()
        pairs = [{"query_text": "q", "doc_id": f"d{i}", "fields": {"grade": 2}} for i in range(3)]
        added = http.post(
            f"/api/v1/books/{book['id']}/pairs", headers=writer, json={"pairs": pairs}
        )
        assert added.status_code == 200
        judge = http.post(
            "/api/v1/judges",
            headers=writer,
            json={
                "name": "Fake",
                "provider": "openai",
                "base_url": f"{llm.url}/v1",
                "model": "gpt-fake",
                "api_key": "sk-x",
                "price_input_per_mtok": 1.0,
                "price_output_per_mtok": 2.0,
            },
        ).json()

        async def agent() -> list[tuple[bool, Any]]:
            async with _session(live_app, agent_world.keys["judge"]) as session:
                ids = {"book_id": book["id"], "judge_id": judge["id"]}
                return [
                    await _call(session, "judge_estimate", **ids),
                    await _call(session, "start_judge_run", **ids),
                    await _call(session, "start_judge_run", **ids, budget_usd=1.0),
                ]

        estimate, unbudgeted, started = asyncio.run(agent())
        assert estimate[0] is False and estimate[1]["pairs"] == 3 and estimate[1]["calls"] == 3
        assert unbudgeted[0] is True and "needs a budget" in unbudgeted[1]
        assert started[0] is False, started[1]
        assert started[1]["agent"] == "judge" and started[1]["budget_usd"] == 1.0
        url = f"/api/v1/books/{book['id']}/judge-runs/{started[1]['id']}"
        deadline = time.monotonic() + 60
        run = http.get(url, headers=writer).json()
        while run["status"] not in {"finished", "failed", "cancelled", "paused"}:
            assert time.monotonic() < deadline, run
            time.sleep(0.1)
            run = http.get(url, headers=writer).json()
        assert (run["status"], run["judged"], run["agent"]) == ("finished", 3, "judge")
        assert len(llm.requests) == 3
