"""add_owned_routes: its five routes are named, documented and answered as the written-out
handlers they replace were (route names, operation ids, summaries, status codes), and pass the
thing to the service by the domain's keyword. Served by a bare app: no database."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

import pytest
from fastapi import APIRouter, Depends, FastAPI, HTTPException
from fastapi.testclient import TestClient
from pydantic import BaseModel

from app.web_common.deps import get_session
from app.web_common.owned import Owned, OwnedSchemas, OwnedService, RouteDocs, add_owned_routes


@dataclass
class Widget:
    id: int
    name: str


class WidgetRead(BaseModel):
    id: int
    name: str


class WidgetCreate(BaseModel):
    name: str


class WidgetUpdate(BaseModel):
    name: str


def caller() -> str:
    return "ann"


def load_widget(widget_id: int) -> Widget:
    if widget_id != 7:
        raise HTTPException(404, "No such widget.")
    return Widget(7, "seven")


@dataclass
class Shop:
    """A fake service: remembers each call's keywords."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def list_widgets(self, **kw: Any) -> list[Widget]:
        self.calls.append(("list", kw))
        return [Widget(1, "one"), Widget(2, "two")]

    def create_widget(self, **kw: Any) -> Widget:
        self.calls.append(("create", kw))
        return Widget(3, kw["body"].name)

    def update_widget(self, **kw: Any) -> Widget:
        self.calls.append(("update", kw))
        return Widget(kw["widget"].id, kw["body"].name)

    def delete_widget(self, **kw: Any) -> None:
        self.calls.append(("delete", kw))


def to_read(widget: Widget) -> WidgetRead:
    return WidgetRead(id=widget.id, name=widget.name)


@pytest.fixture
def shop() -> Shop:
    return Shop()


@pytest.fixture
def app(shop: Shop) -> FastAPI:
    router = APIRouter()
    add_owned_routes(
        router,
        Owned(
            "widget",
            "widgets",
            "/widgets/{widget_id}",
            user=Annotated[str, Depends(caller)],
            item=Annotated[Widget, Depends(load_widget)],
        ),
        OwnedSchemas(read=WidgetRead, create=WidgetCreate, update=WidgetUpdate),
        OwnedService(
            to_read, shop.list_widgets, shop.create_widget, shop.update_widget, shop.delete_widget
        ),
        RouteDocs(
            list="Return the widgets.",
            create="Make a widget.",
            get="Return one widget.",
            update="Rename a widget.",
            delete="Throw a widget away.",
        ),
    )
    app = FastAPI()
    app.include_router(router, prefix="/api")
    app.dependency_overrides[get_session] = lambda: "the session"
    return app


def test_routes_are_named_and_documented_as_handlers_were(app: FastAPI) -> None:
    paths = app.openapi()["paths"]
    many, one = paths["/api/widgets"], paths["/api/widgets/{widget_id}"]
    assert many["get"]["operationId"] == "list_widgets_api_widgets_get"
    assert many["get"]["summary"] == "List Widgets"
    assert many["get"]["description"] == "Return the widgets."
    assert many["post"]["operationId"] == "create_widget_api_widgets_post"
    assert set(many["post"]["responses"]) == {"201", "422"}
    assert many["post"]["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/WidgetCreate"
    }
    assert one["get"]["operationId"] == "get_widget_api_widgets__widget_id__get"
    assert one["patch"]["description"] == "Rename a widget."
    assert one["patch"]["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/WidgetUpdate"
    }
    assert set(one["delete"]["responses"]) == {"204", "422"}
    assert [p["name"] for p in one["delete"]["parameters"]] == ["widget_id"]


def test_routes_call_the_service_with_the_domain_keyword(app: FastAPI, shop: Shop) -> None:
    client = TestClient(app)
    assert client.get("/api/widgets").json() == [{"id": 1, "name": "one"}, {"id": 2, "name": "two"}]
    made = client.post("/api/widgets", json={"name": "new"})
    assert (made.status_code, made.json()) == (201, {"id": 3, "name": "new"})
    assert client.get("/api/widgets/7").json() == {"id": 7, "name": "seven"}
    assert client.get("/api/widgets/8").status_code == 404
    assert client.patch("/api/widgets/7", json={"name": "renamed"}).json()["name"] == "renamed"
    gone = client.delete("/api/widgets/7")
    assert (gone.status_code, gone.content) == (204, b"")
    kinds = [(kind, sorted(kw)) for kind, kw in shop.calls]
    assert kinds == [
        ("list", ["session", "user"]),
        ("create", ["body", "session", "user"]),
        ("update", ["body", "session", "user", "widget"]),
        ("delete", ["session", "user", "widget"]),
    ]
    assert shop.calls[-1][1] == {
        "session": "the session",
        "user": "ann",
        "widget": Widget(7, "seven"),
    }


def test_a_bad_body_is_refused_before_the_service_runs(app: FastAPI, shop: Shop) -> None:
    answer = TestClient(app).post("/api/widgets", json={"title": "no name"})
    assert answer.status_code == 422
    assert shop.calls == []
