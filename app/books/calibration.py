"""Calibration: how well each judge agrees with the book's people, beside how well they agree.

A judge is one more rater: Cohen's kappa (and quadratic weighted kappa) with each person over
the pairs both rated, Krippendorff's alpha of the people with and without it, a confusion
matrix of the people's majority against the judge, and a one-line verdict comparing the
judge's mean kappa with the people's mean kappa among themselves. "Can't tell" and failed
pairs are left out of everything (they have no rating).
"""

from __future__ import annotations

import math
import statistics
import warnings
from collections import defaultdict
from collections.abc import Mapping, Sequence

from sklearn.metrics import cohen_kappa_score
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.books.agreement import agreement_of, numeric_judgements
from app.books.consensus import aggregate
from app.books.schemas import AgreementRead
from app.judges.schemas import JudgeCalibration, KappaWith, RaterRef
from app.models import Book, ClickJudgement, ClickRater, Judge, JudgeJudgement, User

# Below this many pairs rated by the judge and a person, no verdict is given.
MIN_PAIRS = 10
# A judge whose mean kappa is within this of the people's is "about as good".
MARGIN = 0.05

Triple = tuple[int, int, float]


def agreement(*, session: Session, book: Book) -> AgreementRead:
    """Return the book's agreement among people, with every judge's calibration beside it."""
    people = numeric_judgements(session=session, book=book)
    base = agreement_of(people, book.scale)
    judged = _judge_ratings(session, book)
    names = _names(session, people, list(judged))
    rater_list = [RaterRef(kind="user", id=u, name=names[("user", u)]) for u in _users(people)]
    rater_list += [RaterRef(kind="judge", id=j, name=names[("judge", j)]) for j in sorted(judged)]
    calibrations = [
        calibrate(
            judge_id=j,
            name=names[("judge", j)],
            people=people,
            judge=judged[j],
            scale=book.scale,
            people_agreement=base,
            person_names={u: n for (kind, u), n in names.items() if kind == "user"},
        )
        for j in sorted(judged)
    ]
    clicks = _click_ratings(session, book)
    rater_list += [RaterRef(kind="clicks", id=r, name=name) for r, (name, _) in clicks.items()]
    from_clicks = [
        calibrate(
            judge_id=r,
            name=name,
            people=people,
            judge=ratings,
            scale=book.scale,
            people_agreement=base,
        )
        for r, (name, ratings) in clicks.items()
    ]
    return base.model_copy(
        update={"rater_list": rater_list, "judges": calibrations, "clicks": from_clicks}
    )


def _click_ratings(session: Session, book: Book) -> dict[int, tuple[str, dict[int, float]]]:
    """Return each clicks rater of the book (a click model over a log): name and ratings."""
    found: dict[int, tuple[str, dict[int, float]]] = {
        r.id: (r.name, {})
        for r in session.scalars(
            select(ClickRater).where(ClickRater.book_id == book.id).order_by(ClickRater.id)
        )
    }
    stmt = select(ClickJudgement.rater_id, ClickJudgement.pair_id, ClickJudgement.rating).where(
        ClickJudgement.book_id == book.id
    )
    for rater_id, pair_id, rating in session.execute(stmt):
        found[rater_id][1][pair_id] = float(rating)
    return found


def _users(people: Sequence[Triple]) -> list[int]:
    return sorted({u for _, u, _ in people})


def _judge_ratings(session: Session, book: Book) -> dict[int, dict[int, float]]:
    stmt = select(JudgeJudgement.judge_id, JudgeJudgement.pair_id, JudgeJudgement.rating).where(
        JudgeJudgement.book_id == book.id, JudgeJudgement.rating.is_not(None)
    )
    found: dict[int, dict[int, float]] = defaultdict(dict)
    for judge_id, pair_id, rating in session.execute(stmt):
        found[judge_id][pair_id] = float(rating or 0.0)
    return dict(found)


def _names(
    session: Session, people: Sequence[Triple], judge_ids: list[int]
) -> dict[tuple[str, int], str]:
    names: dict[tuple[str, int], str] = {}
    user_ids = _users(people)
    if user_ids:
        for uid, email in session.execute(select(User.id, User.email).where(User.id.in_(user_ids))):
            names[("user", uid)] = email
    if judge_ids:
        for jid, name in session.execute(
            select(Judge.id, Judge.name).where(Judge.id.in_(judge_ids))
        ):
            names[("judge", jid)] = name
    for uid in user_ids:
        names.setdefault(("user", uid), f"user {uid}")
    for jid in judge_ids:
        names.setdefault(("judge", jid), f"judge {jid}")
    return names


def _kappas(a: list[float], b: list[float]) -> tuple[float | None, float | None]:
    if not a:
        return None, None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            plain = float(cohen_kappa_score(a, b))
            weighted = float(cohen_kappa_score(a, b, weights="quadratic"))
        except ValueError:
            return None, None
    return _defined(plain), _defined(weighted)


def _defined(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _index(scale: Sequence[float], value: float) -> int | None:
    for i, v in enumerate(scale):
        if math.isclose(float(v), value, abs_tol=1e-9):
            return i
    return None


def confusion(
    people: Sequence[Triple], judge: dict[int, float], scale: Sequence[float]
) -> list[list[int]]:
    """Return counts [people's majority index][judge's index] over pairs both rated."""
    by_pair: dict[int, list[float]] = defaultdict(list)
    for pair_id, _user, rating in people:
        by_pair[pair_id].append(rating)
    matrix = [[0] * len(scale) for _ in scale]
    for pair_id, ratings in by_pair.items():
        if pair_id not in judge:
            continue
        majority = aggregate("majority", sorted(ratings))
        i = None if majority is None else _index(scale, majority)
        j = _index(scale, judge[pair_id])
        if i is not None and j is not None:
            matrix[i][j] += 1
    return matrix


def calibrate(
    *,
    judge_id: int,
    name: str,
    people: Sequence[Triple],
    judge: dict[int, float],
    scale: Sequence[float],
    people_agreement: AgreementRead,
    person_names: Mapping[int, str] | None = None,
) -> JudgeCalibration:
    """Return one judge's agreement with the people (each named), and the verdict."""
    per_user: dict[int, dict[int, float]] = defaultdict(dict)
    for pair_id, user_id, rating in people:
        per_user[user_id][pair_id] = rating
    kappa_with = []
    for user_id in sorted(per_user):
        shared = sorted(set(per_user[user_id]) & set(judge))
        plain, weighted = _kappas(
            [per_user[user_id][p] for p in shared], [judge[p] for p in shared]
        )
        kappa_with.append(
            KappaWith(
                user_id=user_id,
                name=(person_names or {}).get(user_id, f"user {user_id}"),
                n=len(shared),
                kappa=plain,
                weighted_kappa=weighted,
            )
        )
    person_kappas = [k.kappa for k in people_agreement.cohen_kappa if k.kappa is not None]
    mean_person = float(statistics.fmean(person_kappas)) if person_kappas else None
    judge_kappas = [k.kappa for k in kappa_with if k.kappa is not None]
    mean_judge = float(statistics.fmean(judge_kappas)) if judge_kappas else None
    with_judge = (
        people_agreement
        if not judge
        else agreement_of([*people, *((p, -judge_id, r) for p, r in judge.items())], scale)
    )
    pairs = max((k.n for k in kappa_with), default=0)
    return JudgeCalibration(
        judge_id=judge_id,
        name=name,
        pairs=len(judge),
        kappa_with=kappa_with,
        mean_kappa=mean_judge,
        mean_person_kappa=mean_person,
        alpha_with_judges=with_judge.krippendorff_alpha,
        alpha_without_judges=people_agreement.krippendorff_alpha,
        confusion=confusion(people, judge, scale),
        verdict=verdict(mean_judge, mean_person, pairs),
    )


def verdict(mean_judge: float | None, mean_person: float | None, pairs: int) -> str:
    """Return one line on whether to trust the judge, from the kappas."""
    if pairs < MIN_PAIRS or mean_judge is None:
        return (
            f"Too few pairs rated by both the judge and a person ({pairs}; {MIN_PAIRS} needed) "
            "to say how far to trust it."
        )
    if mean_person is None:
        return (
            f"Kappa with people {mean_judge:.2f}; no two people rated the same pairs, so there "
            "is nothing to compare it with: have two people rate some pairs."
        )
    if mean_judge >= mean_person - MARGIN:
        return (
            f"Agrees with people about as well as they agree with each other "
            f"(kappa {mean_judge:.2f} vs {mean_person:.2f})."
        )
    return (
        f"Agrees with people less than they agree with each other (kappa {mean_judge:.2f} vs "
        f"{mean_person:.2f}): review the disagreements before trusting it."
    )
