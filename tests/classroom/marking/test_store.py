"""The marks database: groups of identical answers, scores from the current rubric, optimistic concurrency,
re-imports after a regrade, and the export phase 2 merges."""

from __future__ import annotations

import pytest

from dpcourse.classroom.marking.export import item_frequencies, marks
from dpcourse.classroom.marking.store import (
    BUSY_TIMEOUT_SECONDS,
    StaleWrite,
    add_answers,
    add_item,
    edit_item,
    groups,
    open_store,
    question,
    save_mark,
    store_path,
)
from dpcourse.classroom.marking.written import check_rubric

RUBRIC = check_rubric(
    4,
    [
        {"id": "step", "text": "Names the step", "points": 3},
        {"id": "why", "text": "Says why", "points": 2},
        {"id": "wrong", "text": "Claims it is private", "points": -2},
    ],
)
ANSWERS = [("ann", "The  step fails"), ("ben", "the step FAILS\n"), ("cat", "It is private"), ("dee", "")]


@pytest.fixture
def store(tmp_path):
    opened = open_store(store_path(tmp_path / "grades.csv"))
    add_answers(opened, "q1", RUBRIC, ANSWERS)
    yield opened
    opened.close()


def group_of(store, student, exercise="q1"):
    return next(g for g in groups(store, exercise) if student in g.students)


def row(store, student):
    return next(r for r in marks(store) if r.student == student)


def mark(store, student, items, *, marker="ta1", adjustment=0.0, comment=""):
    group = group_of(store, student)
    version = group.mark.version if group.mark else 0
    return save_mark(
        store,
        "q1",
        group.key,
        items=items,
        comment=comment,
        adjustment=adjustment,
        marker=marker,
        expected_version=version,
    )


def test_the_database_sits_beside_the_report_in_wal_mode_with_a_busy_timeout(store, tmp_path):
    assert store.path == tmp_path / "grades.csv.marks.sqlite"
    assert store.connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.connection.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_SECONDS * 1000 >= 30_000


def test_identical_answers_are_one_group_marked_once(store):
    assert sorted(len(g.students) for g in groups(store, "q1")) == [1, 1, 2]
    mark(store, "ann", ["step"])
    assert row(store, "ben").points == 3 and row(store, "ben").items == ("step",)
    q = question(store, "q1")
    assert (q.groups, q.groups_marked, q.answers, q.answers_marked) == (3, 1, 4, 2)


def test_the_score_is_the_current_points_plus_the_adjustment_clamped_and_said_so(store):
    mark(store, "ann", ["step", "why"])  # 5 > 4
    mark(store, "cat", ["wrong"])  # -2 < 0
    mark(store, "dee", ["why"], adjustment=-0.5)
    ann, cat, dee = row(store, "ann"), row(store, "cat"), row(store, "dee")
    assert (ann.points, ann.raw, ann.clamped) == (4.0, 5.0, True)
    assert (cat.points, cat.raw, cat.clamped) == (0.0, -2.0, True)
    assert (dee.points, dee.raw, dee.clamped) == (1.5, 1.5, False)


def test_editing_an_item_rescores_every_answer_marked_with_it(store):
    mark(store, "ann", ["step"])
    mark(store, "dee", ["step", "wrong"])
    item, version = edit_item(
        store, "q1", "step", points=2.5, text="Names the step that fails", editor="ta2", expected_version=1
    )
    assert version == 2 and item.text == "Names the step that fails"
    assert [row(store, s).points for s in ("ann", "ben", "dee")] == [2.5, 2.5, 0.5]


def test_a_stale_mark_is_refused_naming_who_saved_in_between(store, tmp_path):
    other = open_store(store.path)  # a second marker's connection
    try:
        key = group_of(store, "ann").key
        save_mark(store, "q1", key, items=["step"], marker="Ayesha", expected_version=0)
        with pytest.raises(StaleWrite, match="saved by Ayesha at .* \\(version 1\\) after you read version 0"):
            save_mark(other, "q1", key, items=["why"], comment="mine", marker="Bruno", expected_version=0)
    finally:
        other.close()
    assert row(store, "ann").items == ("step",) and row(store, "ann").marked_by == "Ayesha"


def test_a_stale_rubric_edit_is_refused_naming_who_edited(store):
    edit_item(store, "q1", "why", points=1, editor="Ayesha", expected_version=1)
    with pytest.raises(StaleWrite, match="Rubric item 'why' was saved by Ayesha"):
        edit_item(store, "q1", "why", text="Explains", editor="Bruno", expected_version=1)
    assert question(store, "q1").items[1][0].text == "Says why"


def test_an_item_added_mid_way_can_be_applied_and_bad_items_are_refused(store):
    added = add_item(store, "q1", text="Cites Lemma 3", points=1, editor="ta1")
    assert added.id == "item-1"
    mark(store, "cat", ["item-1"])
    assert row(store, "cat").points == 1
    with pytest.raises(ValueError, match="not rubric items"):
        mark(store, "cat", ["nope"])
    with pytest.raises(ValueError, match="already exists"):
        add_item(store, "q1", item="step", text="again", points=1, editor="ta1")


def test_a_reimport_replaces_exactly_that_students_answer_and_keeps_her_mark_only_if_the_text_is_the_same(store):
    mark(store, "ann", ["step"])
    mark(store, "cat", ["wrong"])
    summary = add_answers(store, "q1", RUBRIC, [("ann", "THE STEP   fails"), ("cat", "A new answer")])
    assert summary.unchanged == ("ann",) and summary.changed == ("cat",) and summary.added == ()
    assert row(store, "ann").points == 3  # same text up to case and whitespace: kept
    assert row(store, "cat").points is None  # changed: unmarked
    assert row(store, "ben").points == 3 and row(store, "dee").points is None  # nobody else touched
    add_answers(store, "q1", RUBRIC, [("dee", "the step fails")])  # now identical to a marked group
    assert row(store, "dee").points == 3


def test_a_reimport_keeps_the_markers_rubric_and_adds_new_items(store):
    edit_item(store, "q1", "step", points=1, editor="ta1", expected_version=1)
    bigger = check_rubric(
        4,
        [
            *({"id": i.id, "text": i.text, "points": i.points} for i in RUBRIC.items),
            {"id": "cites", "text": "Cites the lecture", "points": 1},
        ],
    )
    add_answers(store, "q1", bigger, [])
    items = {item.id: item.points for item, _ in question(store, "q1").items}
    assert items == {"step": 1, "why": 2, "wrong": -2, "cites": 1}
    with pytest.raises(ValueError, match="rubric.points for 'q1' is 5 but the marks database has 4"):
        add_answers(store, "q1", check_rubric(5, []), [])


def test_an_import_naming_a_student_twice_is_refused_whole(store):
    with pytest.raises(ValueError, match="more than once"):
        add_answers(store, "q2", RUBRIC, [("ann", "a"), ("ann", "b")])
    assert [r.exercise for r in marks(store)] == ["q1"] * 4


def test_the_export_and_the_item_frequencies(store):
    mark(store, "ann", ["step", "why"], comment="Good", marker="Ayesha")
    mark(store, "cat", ["wrong"])
    rows = marks(store)
    assert [(r.student, r.points, r.max_points) for r in rows] == [
        ("ann", 4.0, 4.0),
        ("ben", 4.0, 4.0),
        ("cat", 0.0, 4.0),
        ("dee", None, 4.0),
    ]
    assert rows[0].comment == "Good" and rows[0].marked_by == "Ayesha" and rows[0].items == ("step", "why")
    frequencies = {f.item: (f.students, f.marked) for f in item_frequencies(store)}
    assert frequencies == {"step": (2, 3), "why": (2, 3), "wrong": (1, 3)}


def test_a_bad_marker_or_version_is_refused(store):
    key = group_of(store, "ann").key
    with pytest.raises(ValueError, match="marker must be"):
        save_mark(store, "q1", key, items=[], marker=" ", expected_version=0)
    with pytest.raises(ValueError, match="expected_version must be"):
        save_mark(store, "q1", key, items=[], marker="ta", expected_version=-1)
    with pytest.raises(ValueError, match="no answer group"):
        save_mark(store, "q1", "0" * 64, items=[], marker="ta", expected_version=0)
