"""The book's agreement view with judges as raters: kappas, alpha, confusion, verdict."""

from __future__ import annotations

from typing import Any

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from sqlalchemy.orm import Session, sessionmaker

from app.books.calibration import verdict
from app.models import Judge, JudgeJudgement
from tests.fixtures.users import ApiUser
from tests.support.books import (
    add_pairs,
    case_with_run,
    judge,
    make_book,
    share_books_with_raters,
)

ALICE = [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]
BOB = [0, 1, 2, 3, 0, 1, 2, 3, 1, 2, 3, 3]


def add_judge(
    db: Session, owner_id: int, name: str, book_id: int, ratings: dict[int, float]
) -> int:
    row = Judge(
        owner_id=owner_id, name=name, provider="openai", base_url="http://127.0.0.1:9", model="m"
    )
    db.add(row)
    db.flush()
    for pair_id, rating in ratings.items():
        db.add(
            JudgeJudgement(
                book_id=book_id,
                pair_id=pair_id,
                judge_id=row.id,
                rating=rating,
                model="m",
                prompt_sha256="0" * 64,
            )
        )
    db.commit()
    return row.id


@pytest.fixture
def world(
    api: ApiUser, other_api: ApiUser, db: Session, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    share_books_with_raters(monkeypatch, api)
    book = make_book(api)
    ids = add_pairs(api, book["id"], [("q", f"d{i}") for i in range(12)])
    pair_ids = [ids[("q", f"d{i}")] for i in range(12)]
    for pair_id, a, b in zip(pair_ids, ALICE, BOB, strict=True):
        assert judge(api, book["id"], pair_id, a).status_code == 200
        assert judge(other_api, book["id"], pair_id, b).status_code == 200
    twin = add_judge(
        db, api.id, "Twin", book["id"], dict(zip(pair_ids, map(float, ALICE), strict=True))
    )
    contrary = add_judge(
        db,
        api.id,
        "Contrary",
        book["id"],
        {p: 3.0 - a for p, a in zip(pair_ids, ALICE, strict=True)},
    )
    return {"book": book, "twin": twin, "contrary": contrary}


def test_judges_are_raters_with_kappas_alpha_confusion_and_verdict(
    api: ApiUser, other_api: ApiUser, world: dict[str, Any]
) -> None:
    response = api.get(f"/api/v1/books/{world['book']['id']}/agreement")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["raters"] == 2  # people
    assert body["rater_list"] == [
        {"kind": "user", "id": api.id, "name": api.email},
        {"kind": "user", "id": other_api.id, "name": other_api.email},
        {"kind": "judge", "id": world["twin"], "name": "Twin"},
        {"kind": "judge", "id": world["contrary"], "name": "Contrary"},
    ]
    people_kappa = float(cohen_kappa_score(ALICE, BOB))
    by_id = {j["judge_id"]: j for j in body["judges"]}
    twin = by_id[world["twin"]]
    with_alice, with_bob = twin["kappa_with"]
    assert (with_alice["user_id"], with_alice["n"]) == (api.id, 12)
    assert with_alice["kappa"] == pytest.approx(1.0)
    assert with_alice["weighted_kappa"] == pytest.approx(1.0)
    assert with_bob["kappa"] == pytest.approx(people_kappa)
    weighted = float(cohen_kappa_score(ALICE, BOB, weights="quadratic"))
    assert with_bob["weighted_kappa"] == pytest.approx(weighted)
    assert twin["mean_person_kappa"] == pytest.approx(people_kappa)
    # By hand: observed 9/12 = 0.75; chance 0.25 x (2+3+3+4)/12 = 0.25; (0.75-0.25)/0.75.
    assert round(people_kappa, 4) == 0.6667
    # People's majority (ties → the lower rating) is Alice's rating on every pair.
    assert twin["confusion"] == [[3, 0, 0, 0], [0, 3, 0, 0], [0, 0, 3, 0], [0, 0, 0, 3]]
    alpha_people = krippendorff.alpha(
        reliability_data=np.array([ALICE, BOB], dtype=float),
        level_of_measurement="ordinal",
        value_domain=[0.0, 1.0, 2.0, 3.0],
    )
    alpha_with = krippendorff.alpha(
        reliability_data=np.array([ALICE, BOB, ALICE], dtype=float),
        level_of_measurement="ordinal",
        value_domain=[0.0, 1.0, 2.0, 3.0],
    )
    assert twin["alpha_without_judges"] == pytest.approx(alpha_people)
    assert twin["alpha_with_judges"] == pytest.approx(alpha_with)
    assert twin["alpha_with_judges"] > twin["alpha_without_judges"]
    assert twin["verdict"].startswith("Agrees with people about as well as they agree")
    contrary = by_id[world["contrary"]]
    assert contrary["kappa_with"][0]["kappa"] < 0
    assert contrary["confusion"][0] == [0, 0, 0, 3]  # people say 0, the judge says 3
    assert contrary["verdict"].startswith("Agrees with people less than they agree")


def test_book_page_json_carries_the_judges(api: ApiUser, world: dict[str, Any]) -> None:
    page = api.get(f"/api/v1/pages/books/{world['book']['id']}")
    assert page.status_code == 200, page.text
    assert len(page.json()["agreement"]["judges"]) == 2


@pytest.mark.parametrize(
    ("mean_judge", "mean_person", "pairs", "start"),
    [
        (0.6, 0.62, 50, "Agrees with people about as well"),
        (0.3, 0.62, 50, "Agrees with people less than"),
        (0.9, None, 50, "Kappa with people 0.90; no two people"),
        (0.9, 0.5, 9, "Too few pairs"),
        (None, 0.5, 50, "Too few pairs"),
    ],
)
def test_verdict(
    mean_judge: float | None, mean_person: float | None, pairs: int, start: str
) -> None:
    assert verdict(mean_judge, mean_person, pairs).startswith(start)


def test_sync_excludes_includes_or_takes_judges_alone(
    api: ApiUser, world: dict[str, Any], session_factory: sessionmaker[Session]
) -> None:
    case_id, qids, _run = case_with_run(api, session_factory, {"q": ["d0", "d8", "d11"]})
    url = f"/api/v1/cases/{case_id}/books/{world['book']['id']}/sync"

    def synced(body: dict[str, Any]) -> dict[str, float]:
        response = api.post(url, json=body)
        assert response.status_code == 200, response.text
        ratings = api.get(f"/api/v1/cases/{case_id}/queries/{qids['q']}/ratings").json()
        shown = {"d0", "d8", "d11"}  # every pair of query "q" is written; these three are shown
        return {r["doc_id"]: r["rating"] for r in ratings["ratings"] if r["doc_id"] in shown}

    # People only (the default): Alice 0/0/3, Bob 0/1/3 on d0/d8/d11.
    assert synced({"method": "mean"}) == {"d0": 0.0, "d8": 0.5, "d11": 3.0}
    # Judges alone: Twin says Alice's rating a, Contrary 3 - a: their mean is 1.5 everywhere.
    assert synced({"method": "mean", "judges": "only"}) == {"d0": 1.5, "d8": 1.5, "d11": 1.5}
    # Everyone: d0 = (0 + 0 + 0 + 3) / 4.
    assert synced({"method": "mean", "judges": "include"}) == {
        "d0": 0.75,
        "d8": 1.0,
        "d11": 2.25,
    }
    assert synced({"method": "rater", "judge_id": world["contrary"]}) == {
        "d0": 3.0,
        "d8": 3.0,
        "d11": 0.0,
    }
    both = api.post(url, json={"method": "rater", "judge_id": world["twin"], "user_id": api.id})
    assert both.status_code == 422


def test_sync_with_someone_elses_judge_is_a_404_like_a_missing_one(
    api: ApiUser,
    other_api: ApiUser,
    world: dict[str, Any],
    db: Session,
    session_factory: sessionmaker[Session],
) -> None:
    book_id = world["book"]["id"]
    pair_ids = [p["id"] for p in api.get(f"/api/v1/books/{book_id}/pairs").json()]
    # Bob's own judge has rated Alice's book (he is one of its raters).
    bobs = add_judge(db, other_api.id, "Bob's", book_id, dict.fromkeys(pair_ids, 2.0))
    case_id, qids, _run = case_with_run(api, session_factory, {"q": ["d0", "d8"]})
    url = f"/api/v1/cases/{case_id}/books/{book_id}/sync"
    before = api.get(f"/api/v1/cases/{case_id}/queries/{qids['q']}/ratings").json()
    theirs = api.post(url, json={"method": "rater", "judge_id": bobs})
    missing = api.post(url, json={"method": "rater", "judge_id": 987654})
    assert theirs.status_code == missing.status_code == 404
    assert theirs.json() == missing.json() == {"detail": "No such judge."}
    assert api.get(f"/api/v1/cases/{case_id}/queries/{qids['q']}/ratings").json() == before
    # Alice's own judge still syncs.
    assert api.post(url, json={"method": "rater", "judge_id": world["twin"]}).status_code == 200
