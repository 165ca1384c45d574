"""``dpcourse canvas pull|push`` against a Canvas on 127.0.0.1: canvasapi's real requests, a local server.

The server (``http.server`` in a thread, started and stopped by each test) answers as Canvas's REST API does,
from its documentation: the User (with ``enrollments``), Section, Assignment, Submission (``attempt``,
``submitted_at``, ``late``, ``seconds_late``, ``attachments``, ``submission_history``, ``submission_comments``) and
File objects; pages linked by the ``Link`` header; the three-step file upload (``upload_url`` and
``upload_params``, a multipart POST without the token, the File answered with 201); 401 with
``WWW-Authenticate`` for a bad token; Canvas's throttle (403 with ``X-Rate-Limit-Remaining`` spent) and a 429
with ``Retry-After``; and any answer made to fail once, midway.

One test goes the whole way, as an instructor does: two assignments pulled, graded by the grader (its kernels
run the pulled notebooks), and pushed, with a failure midway and a rerun.
"""

from __future__ import annotations

import csv
import email.parser
import email.policy
import json
import logging
import re
import threading
import time
import traceback
import urllib.parse
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import nbformat
import pytest

from dpcourse.classroom.cli import main
from dpcourse.classroom.course import CourseError, load_course
from dpcourse.classroom.gradebook.roster import read_collected, read_roster
from dpcourse.classroom.grading.plan import read_outline
from dpcourse.classroom.grading.reports import GradeRow, write_report
from dpcourse.classroom.lms.archive import CollectLimits
from dpcourse.classroom.lms.canvas import api as canvas_module
from dpcourse.classroom.lms.canvas.api import CanvasError, connect, read_token, roster_entries
from dpcourse.classroom.lms.canvas.download import _read_canvas_submissions
from dpcourse.classroom.lms.canvas.push import feedback_marker, read_canvas_grades
from dpcourse.classroom.outputs import write_gradebook
from tests.classroom.grading_scenarios import WRONG, jobs_for, released, right, source_notebook, with_answers
from tests.classroom.ordinary_python import grade_command

TOKEN = "7~s3cr3t-t0ken-never-printed"
COURSE_ID = 1
WEEK1, WEEK2 = 10, 11
OUTLINE = {"01_alpha": {"a1": 1.0, "a2": 1.0}, "02_beta": {"b1": 2.0}}
PAGE = 2  # the server's page size: every list of more than two comes in pages


# --------------------------------------------------------------------------- the course on disk


def course_notebooks(folder: Path) -> Path:
    """Two tiny instructor notebooks: 01_alpha (a1, a2: 1 point each), 02_beta (b1: 2 points)."""
    folder.mkdir()
    for stem, exercises in OUTLINE.items():
        cells = [nbformat.v4.new_markdown_cell(f"# {stem}")]
        for exercise, points in exercises.items():
            solution = nbformat.v4.new_code_cell("### BEGIN SOLUTION\nanswer = 1\n### END SOLUTION")
            solution.metadata["dpcourse"] = {"exercise": exercise}
            solution["id"] = f"{stem}-{exercise}-solution"
            check = nbformat.v4.new_code_cell("assert answer == 1")
            check.metadata.update({"tags": ["check"], "dpcourse": {"exercise": exercise, "points": points}})
            check["id"] = f"{stem}-{exercise}-check"
            cells += [solution, check]
        nbformat.write(nbformat.v4.new_notebook(cells=cells), folder / f"{stem}.ipynb")
    return folder


def submitted(stem: str, marker: str) -> bytes:
    """A student's notebook of ``stem`` whose first cell says which upload it was."""
    cells: list[dict[str, Any]] = [{"cell_type": "markdown", "id": "m", "metadata": {}, "source": marker}]
    for exercise in OUTLINE[stem]:
        cells.append(
            {
                "cell_type": "code",
                "id": f"{stem}-{exercise}-solution",
                "metadata": {"dpcourse": {"exercise": exercise}},
                "source": "answer = 1",
                "outputs": [],
                "execution_count": None,
            }
        )
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()


def course_file(folder: Path, url: str, *, week1_id: int = WEEK1) -> Path:
    path = folder / "course.toml"
    path.write_text(
        f"""
[late]
penalty_per_day = 0.1
max_penalty = 0.5

[canvas]
url = "{url}"
course_id = {COURSE_ID}

[assignments.week1]
name = "Week 1"
notebooks = ["01_alpha"]
due = 2026-10-05T23:59:00+00:00
canvas_id = {week1_id}

[assignments.week2]
name = "Week 2"
notebooks = ["02_beta"]
due = 2026-10-12T23:59:00+00:00
canvas_id = {WEEK2}

[extensions.chloe]
week1 = 2026-10-08T23:59:00+00:00
""",
        encoding="utf-8",
    )
    return path


# --------------------------------------------------------------------------- the server


@dataclass
class Failure:
    """An answer made to fail: the first ``times`` requests matching ``method`` and ``path`` get ``status``."""

    method: str
    path: str  # a regular expression matched against the path
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    times: int = 1
    sent: str = ""  # a form field the request must carry (a comment's PUT, not a grade's)


class FakeCanvas:
    """The state of one Canvas course, and the log of every request it was sent."""

    def __init__(self) -> None:
        self.url = ""
        self.sections = [{"id": 501, "name": "Section A", "course_id": COURSE_ID}, {"id": 502, "name": "Section B"}]
        self.users = [
            self.user(101, "Ada Lovelace", "Lovelace, Ada", "ada", "S1", 501),
            self.user(102, "Bob Brown", "Brown, Bob", "bob", "S2", 502),
            self.user(103, "Chloé Dupont", "Dupont, Chloé", "chloe", "S3", 501),
            self.user(104, "Dan Doe", "Doe, Dan", "dan", "S4", 502),
            self.user(105, "Eve Evans", "Evans, Eve", "eve", "S5", 501),
        ]
        self.files: dict[int, bytes] = {}
        self.file_meta: dict[int, dict[str, Any]] = {}
        self.submissions: dict[tuple[int, int], dict[str, Any]] = {}
        self.failures: list[Failure] = []
        self.slow: dict[str, float] = {}  # path pattern → seconds to wait before answering
        self.errors: list[str] = []  # tracebacks of handlers that failed (a client that hung up, say)
        self.log: list[tuple[str, str, dict[str, list[str]]]] = []
        self.tokens_seen: set[str] = set()
        self.lock = threading.Lock()
        self.next_file = 9000

    @staticmethod
    def user(uid: int, name: str, sortable: str, login: str, sis: str, section: int) -> dict[str, Any]:
        enrollment = {
            "id": uid + 7000,
            "course_id": COURSE_ID,
            "course_section_id": section,
            "type": "StudentEnrollment",
            "enrollment_state": "active",
            "role": "StudentEnrollment",
            "user_id": uid,
        }
        return {
            "id": uid,
            "name": name,
            "sortable_name": sortable,
            "short_name": name,
            "sis_user_id": sis,
            "login_id": login,
            "enrollments": [enrollment],
        }

    def attachment(self, file_id: int, name: str, data: bytes, *, size: int | None = None, url: str = "") -> dict:
        self.files[file_id] = data
        return {
            "id": file_id,
            "display_name": name,
            "filename": name,
            "content-type": "application/x-ipynb+json",
            "size": len(data) if size is None else size,
            "url": url or f"{self.url}/files/{file_id}/download?download_frd=1&verifier=v{file_id}",
        }

    def submission(self, assignment: int, uid: int, attempts: list[dict[str, Any]], **fields: Any) -> None:
        """A submission whose history is ``attempts`` (each: submitted_at, late, seconds_late, attachments)."""
        history = [
            {"assignment_id": assignment, "user_id": uid, "attempt": n, "workflow_state": "submitted", **a}
            for n, a in enumerate(attempts, start=1)
        ]
        current = history[-1] if history else {"attempt": None, "submitted_at": None, "late": False, "seconds_late": 0}
        self.submissions[(assignment, uid)] = {
            "id": assignment * 1000 + uid,
            "assignment_id": assignment,
            "user_id": uid,
            "attempt": current.get("attempt"),
            "submitted_at": current.get("submitted_at"),
            "late": current.get("late", False),
            "seconds_late": current.get("seconds_late", 0),
            "workflow_state": "submitted" if history else "unsubmitted",
            "submission_type": "online_upload" if history else None,
            "attachments": current.get("attachments", []),
            "score": None,
            "grade": None,
            "submission_history": history,
            "submission_comments": [],
            **fields,
        }

    def comments(self, assignment: int, uid: int) -> list[dict[str, Any]]:
        return self.submissions[(assignment, uid)]["submission_comments"]

    def requests(self, method: str, pattern: str = "") -> list[tuple[str, str, dict[str, list[str]]]]:
        return [r for r in self.log if r[0] == method and re.search(pattern, r[1])]


def standard_course(server: FakeCanvas) -> None:
    """Week 1: Ada on time, Bob 1 h 10 min late under a hostile name, Chloé late for Canvas but extended, Dan's
    resubmission (with an oversized file and one on another host), Eve nothing. Week 2: Ada's grade, kept."""
    on_time = {"submitted_at": "2026-10-05T21:00:00Z", "late": False, "seconds_late": 0}
    server.submission(
        WEEK1,
        101,
        [{**on_time, "attachments": [server.attachment(2101, "01_alpha.ipynb", submitted("01_alpha", "ada"))]}],
        score=2.0,
        grade="2",
    )
    server.users[0]["enrollments"].append(dict(server.users[0]["enrollments"][0], id=7999, course_section_id=502))
    late = {"submitted_at": "2026-10-06T01:09:00Z", "late": True, "seconds_late": 4200}
    hostile = server.attachment(2201, "../../01_alpha.ipynb", submitted("01_alpha", "bob"))
    pdf = server.attachment(2202, "notes.pdf", b"%PDF-1.4 not a notebook")
    server.submission(WEEK1, 102, [{**late, "attachments": [hostile, pdf]}])
    extended = {"submitted_at": "2026-10-07T12:00:00Z", "late": True, "seconds_late": 130860}
    server.submission(
        WEEK1,
        103,
        [{**extended, "attachments": [server.attachment(2301, "01_alpha.ipynb", submitted("01_alpha", "chloe"))]}],
    )
    first = {"submitted_at": "2026-10-04T10:00:00Z", "late": False, "seconds_late": 0}
    second = {"submitted_at": "2026-10-05T20:00:00Z", "late": False, "seconds_late": 0}
    server.submission(
        WEEK1,
        104,
        [
            {**first, "attachments": [server.attachment(2401, "01_alpha.ipynb", submitted("01_alpha", "dan 1"))]},
            {
                **second,
                "attachments": [
                    server.attachment(2402, "01_alpha-1.ipynb", submitted("01_alpha", "dan 2")),
                    server.attachment(2403, "big.ipynb", b"{}", size=10**9),
                    server.attachment(2404, "elsewhere.ipynb", b"{}", url="https://files.example.invalid/2404"),
                ],
            },
        ],
    )
    server.submission(WEEK1, 105, [])
    for uid in (101, 102, 103, 104, 105):
        server.submission(WEEK2, uid, [], **({"score": 5.0, "grade": "5"} if uid == 101 else {}))


def _page(items: list[Any], query: dict[str, list[str]], base: str, path: str) -> tuple[list[Any], str]:
    """One page of ``items`` and its ``Link`` header, as Canvas paginates."""
    page = int(query.get("page", ["1"])[0])
    last = max(1, -(-len(items) // PAGE))
    kept = {k: v for k, v in query.items() if k not in ("page", "per_page")}

    def link(number: int, rel: str) -> str:
        params = urllib.parse.urlencode(
            [*((k, x) for k, v in kept.items() for x in v), ("page", number), ("per_page", PAGE)]
        )
        return f'<{base}{path}?{params}>; rel="{rel}"'

    links = [link(page, "current"), link(1, "first"), link(last, "last")]
    if page < last:
        links.insert(1, link(page + 1, "next"))
    return items[(page - 1) * PAGE : page * PAGE], ",".join(links)


class Handler(BaseHTTPRequestHandler):
    canvas: FakeCanvas

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def answer(self, status: int, body: Any, headers: dict[str, str] | None = None, raw: bytes | None = None) -> None:
        data = raw if raw is not None else json.dumps(body).encode()
        self.send_response(status)
        self.send_header(
            "Content-Type", "application/json; charset=utf-8" if raw is None else "application/octet-stream"
        )
        self.send_header("Content-Length", str(len(data)))
        for key, value in {"X-Rate-Limit-Remaining": "700.0", **(headers or {})}.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def form(self) -> dict[str, list[str]]:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        kind = self.headers.get("Content-Type", "")
        if kind.startswith("multipart/form-data"):
            message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
                f"Content-Type: {kind}\r\n\r\n".encode() + body
            )
            found: dict[str, list[str]] = {}
            for part in message.iter_parts():
                name = part.get_param("name", header="content-disposition")
                payload = part.get_payload(decode=True)
                if part.get_filename():
                    self.upload = (part.get_filename(), payload)
                else:
                    found.setdefault(name, []).append(payload.decode())
            return found
        return urllib.parse.parse_qs(body.decode(), keep_blank_values=True)

    def handle_any(self, method: str) -> None:
        server = self.canvas
        parsed = urllib.parse.urlsplit(self.path)
        path, query = parsed.path, urllib.parse.parse_qs(parsed.query, keep_blank_values=True)
        self.upload: tuple[str, bytes] | None = None
        form = self.form() if method in ("POST", "PUT") else {}
        for pattern, seconds in list(server.slow.items()):
            if re.search(pattern, path):
                time.sleep(seconds)
        with server.lock:
            server.log.append((method, path, {**query, **form}))
            auth = self.headers.get("Authorization", "")
            if auth:
                server.tokens_seen.add(auth)
            for failure in server.failures:
                matches = failure.method == method and re.search(failure.path, path)
                if failure.times > 0 and matches and (not failure.sent or failure.sent in form):
                    failure.times -= 1
                    body = {"errors": [{"message": f"failure {failure.status}"}]}
                    if failure.status == 403:  # Canvas's two 403s: its throttle, and a permission refused
                        body = {"status": "unauthorized", "errors": [{"message": "user not authorized"}]}
                    throttled = failure.headers.get("X-Rate-Limit-Remaining", "1").startswith("0")
                    raw = b"403 Forbidden (Rate Limit Exceeded)\n" if failure.status == 403 and throttled else None
                    self.answer(failure.status, body, failure.headers, raw=raw)
                    return
            if path.startswith("/upload/"):
                self.finish_upload(path)
                return
            if auth != f"Bearer {TOKEN}":
                self.answer(
                    401,
                    {"errors": [{"message": "Invalid access token."}]},
                    {"WWW-Authenticate": 'Bearer realm="canvas-lms"'},
                )
                return
            self.route(method, path, query, form)

    def route(self, method: str, path: str, query: dict[str, list[str]], form: dict[str, list[str]]) -> None:
        server = self.canvas
        course = f"/api/v1/courses/{COURSE_ID}"
        include = set(query.get("include[]", []))
        if method == "GET" and path == course:
            return self.answer(200, {"id": COURSE_ID, "name": "Differential privacy", "course_code": "DP"})
        if method == "GET" and path == f"{course}/sections":
            items, link = _page(server.sections, query, server.url, path)
            return self.answer(200, items, {"Link": link})
        if method == "GET" and path in (f"{course}/users", f"{course}/search_users"):  # canvasapi calls the second
            users = [
                u if "enrollments" in include else {k: v for k, v in u.items() if k != "enrollments"}
                for u in server.users
            ]
            items, link = _page(users, query, server.url, path)
            return self.answer(200, items, {"Link": link})
        if found := re.fullmatch(rf"{course}/assignments/(\d+)", path):
            aid = int(found.group(1))
            if method == "GET" and aid in {a for a, _ in server.submissions}:
                return self.answer(
                    200, {"id": aid, "course_id": COURSE_ID, "name": f"Week {aid - 9}", "points_possible": 2}
                )
            return self.answer(404, {"errors": [{"message": "The specified resource does not exist."}]})
        if found := re.fullmatch(rf"{course}/assignments/(\d+)/submissions", path):
            aid = int(found.group(1))
            rows = [dict(s) for (a, _), s in sorted(server.submissions.items()) if a == aid]
            for row in rows:
                if "submission_history" not in include:
                    row.pop("submission_history")
                if "submission_comments" not in include:
                    row.pop("submission_comments")
            items, link = _page(rows, query, server.url, path)
            return self.answer(200, items, {"Link": link})
        if found := re.fullmatch(rf"{course}/assignments/(\d+)/submissions/(\d+)", path):
            return self.update(int(found.group(1)), int(found.group(2)), form)
        if found := re.fullmatch(rf"{course}/assignments/(\d+)/submissions/(\d+)/comments/files", path):
            server.next_file += 1
            token = server.next_file
            server.file_meta[token] = {"name": form["name"][0], "size": int(form["size"][0])}
            return self.answer(
                200, {"upload_url": f"{server.url}/upload/{token}", "upload_params": {"key": f"k{token}"}}
            )
        if found := re.fullmatch(r"/files/(\d+)/download", path):
            return self.answer(200, None, raw=server.files[int(found.group(1))])
        return self.answer(404, {"errors": [{"message": "The specified resource does not exist."}]})

    def update(self, aid: int, uid: int, form: dict[str, list[str]]) -> None:
        server = self.canvas
        submission = server.submissions.get((aid, uid))
        if submission is None:
            return self.answer(404, {"errors": [{"message": "The specified resource does not exist."}]})
        if "submission[posted_grade]" in form:
            grade = form["submission[posted_grade]"][0]
            submission["grade"], submission["score"] = grade, float(grade)
        if "comment[text_comment]" in form or "comment[file_ids][]" in form:
            files = [int(i) for i in form.get("comment[file_ids][]", [])]
            submission["submission_comments"].append(
                {
                    "id": len(server.log),
                    "author_id": 1,
                    "author_name": "Instructor",
                    "comment": form.get("comment[text_comment]", [""])[0],
                    "created_at": "2026-10-20T10:00:00Z",
                    "attachments": [
                        {
                            "id": i,
                            "display_name": server.file_meta[i]["name"],
                            "size": len(server.files[i]),
                            "url": f"{server.url}/files/{i}/download",
                        }
                        for i in files
                    ],
                }
            )
        body = {k: v for k, v in submission.items() if k not in ("submission_history", "submission_comments")}
        return self.answer(200, body)

    def finish_upload(self, path: str) -> None:
        server = self.canvas
        token = int(path.rsplit("/", 1)[1])
        meta = server.file_meta[token]
        assert self.upload is not None and self.upload[0] == meta["name"]
        server.files[token] = self.upload[1]
        file = {
            "id": token,
            "display_name": meta["name"],
            "size": len(self.upload[1]),
            "url": f"{server.url}/files/{token}/download",
        }
        self.answer(201, file, {"Location": f"{server.url}/api/v1/files/{token}"})

    def do_GET(self) -> None:
        self.handle_any("GET")

    def do_POST(self) -> None:
        self.handle_any("POST")

    def do_PUT(self) -> None:
        self.handle_any("PUT")


class Server(ThreadingHTTPServer):
    """The HTTP server; an error in a handler is kept (``FakeCanvas.errors``), not printed on the stderr the tests
    read (a handler's bug shows as the client's failure; a client hanging up on a busy machine is no error)."""

    canvas: FakeCanvas

    def handle_error(self, request: Any, client_address: Any) -> None:
        self.canvas.errors.append(traceback.format_exc())


@pytest.fixture
def server():
    state = FakeCanvas()
    handler = type("BoundHandler", (Handler,), {"canvas": state})
    httpd = Server(("127.0.0.1", 0), handler)
    httpd.canvas = state
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


@pytest.fixture
def setup(server, tmp_path, monkeypatch):
    """The course on disk and on the server; the token in the environment; fast backoff."""
    standard_course(server)
    source = course_notebooks(tmp_path / "source")
    monkeypatch.setenv("CANVAS_TOKEN", TOKEN)
    monkeypatch.setattr(canvas_module, "BACKOFF", 0.01)
    return source, course_file(tmp_path, server.url)


def marker(path: Path) -> str:
    return json.loads(path.read_bytes())["cells"][0]["source"]


def rows_of(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out = capsys.readouterr()
    return status, out.out, out.err


# --------------------------------------------------------------------------- pull


def pull_week1(source: Path, course_path: Path, out: Path, capsys) -> tuple[int, str, str]:
    return run(
        capsys, "canvas", "pull", "week1", "--course", str(course_path), "--source", str(source), "--out", str(out)
    )


def test_pull_writes_the_roster_and_every_attempt_as_collect_does_with_canvas_times(setup, server, tmp_path, capsys):
    source, course_path = setup
    out = tmp_path / "submissions"
    status, printed, err = pull_week1(source, course_path, out, capsys)
    assert (status, err) == (0, "")
    # the roster: every page of users, in the gradebook's CSV, sections by name (Ada is in both)
    roster = read_roster(out / "roster.csv")
    assert [(e.student, e.canvas_id, e.sis_user_id, e.sis_login_id, e.section) for e in roster] == [
        ("ada", "101", "S1", "ada", "Section A; Section B"),
        ("bob", "102", "S2", "bob", "Section B"),
        ("chloe", "103", "S3", "chloe", "Section A"),
        ("dan", "104", "S4", "dan", "Section B"),
        ("eve", "105", "S5", "eve", "Section A"),
    ]
    assert roster[2].name == "Chloé Dupont"
    # the files: one per student and notebook, the latest attempt's, under the roster's id only
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*.ipynb")) == [
        "ada/01_alpha.ipynb",
        "bob/01_alpha.ipynb",
        "chloe/01_alpha.ipynb",
        "dan/01_alpha.ipynb",
    ]
    assert marker(out / "dan/01_alpha.ipynb") == "dan 2"
    assert not list(tmp_path.glob("01_alpha*")) and not (out.parent / "01_alpha.ipynb").exists()
    # collected.csv: collect's columns, each attempt's own time and late mark
    rows = rows_of(out / "collected.csv")
    assert list(rows[0]) == ["student", "notebook", "source_file", "submitted_at", "late", "kept", "note"]
    kept = {r["student"]: r for r in rows if r["kept"] == "true"}
    assert {s: (r["submitted_at"], r["late"]) for s, r in kept.items()} == {
        "ada": ("2026-10-05T21:00:00+00:00", "false"),
        "bob": ("2026-10-06T01:09:00+00:00", "true"),
        "chloe": ("2026-10-07T12:00:00+00:00", "true"),
        "dan": ("2026-10-05T20:00:00+00:00", "false"),
    }
    assert "by its cells" in kept["bob"]["note"]
    others = {
        (r["student"], r["source_file"].split(" ", 2)[-1] if " " in r["source_file"] else r["source_file"]): r["note"]
        for r in rows
        if r["kept"] == "false"
    }
    notes = {name: note for (_, name), note in others.items()}
    assert notes["notes.pdf"] == "not a notebook of this course"
    assert notes["big.ipynb"].startswith("larger than")
    assert notes["elsewhere.ipynb"] == "not downloaded: its address is not on the Canvas instance"
    assert notes["01_alpha.ipynb"].startswith("older submission")  # Dan's first attempt
    # only the notebooks read were downloaded: never the PDF, the oversized file or the other host's
    downloaded = {int(re.search(r"/files/(\d+)/", p).group(1)) for _, p, _ in server.requests("GET", r"^/files/")}
    assert downloaded <= {2101, 2201, 2301, 2401, 2402}
    assert {2101, 2201, 2301, 2402} <= downloaded
    # the submissions' JSON, as collect --canvas-submissions reads it, with seconds_late and attempts
    pulled = json.loads((out / "canvas_submissions.json").read_text())
    assert {(s["user_id"], s["attempt"], s["late"], s["seconds_late"]) for s in pulled} == {
        (101, 1, False, 0),
        (102, 1, True, 4200),
        (103, 1, True, 130860),
        (104, 2, False, 0),
        (105, None, False, 0),
    }
    assert _read_canvas_submissions([out / "canvas_submissions.json"], CollectLimits())["102"] == datetime(
        2026, 10, 6, 1, 9, tzinfo=UTC
    )
    assert "eve: nothing in the input" in printed
    assert server.requests("GET", r"/search_users$")[-1][2]["page"] == ["3"]  # all three pages were read
    assert server.tokens_seen == {f"Bearer {TOKEN}"}


def test_lateness_from_a_pull_is_charged_by_the_minute_and_not_to_the_extended_student(setup, tmp_path, capsys):
    source, course_path = setup
    out = tmp_path / "submissions"
    assert pull_week1(source, course_path, out, capsys)[0] == 0
    roster = read_roster(out / "roster.csv")
    course = load_course(course_path, read_outline(source), students=[e.student for e in roster])
    times = read_collected(out / "collected.csv")
    rows = [GradeRow(s, "01_alpha", ex, "passed", 1, 1) for s in ("ada", "bob", "chloe", "dan") for ex in ("a1", "a2")]
    written, _ = write_gradebook(
        rows,
        read_outline(source),
        report=tmp_path / "g.csv",
        roster=roster,
        lms=["canvas"],
        course=course,
        submissions=times,
    )
    canvas_csv = next(p for p in written if p.name == "g_canvas.csv")
    grades = read_canvas_grades(canvas_csv, course.assignment("week1"))
    # Bob: 1 h 10 min late is one started day (10 % of 2 points); Chloé's extension: nothing; Eve: no value
    assert grades == {"101": "2", "102": "1.8", "103": "2", "104": "2"}


def test_a_download_that_stalls_times_out_as_that_files_row(setup, server, tmp_path, capsys, monkeypatch):
    source, course_path = setup
    monkeypatch.setattr(canvas_module, "TIMEOUT", (2.0, 0.3))
    server.slow[r"^/files/2101/"] = 1.5
    started = time.monotonic()
    status, _, err = pull_week1(source, course_path, tmp_path / "out", capsys)
    assert (status, err) == (0, "") and time.monotonic() - started < 30
    [ada] = [r for r in rows_of(tmp_path / "out" / "collected.csv") if r["student"] == "ada"]
    assert ada["kept"] == "false" and ada["note"].startswith("unreadable (")
    assert not (tmp_path / "out" / "ada").exists() and (tmp_path / "out" / "bob" / "01_alpha.ipynb").is_file()


def test_pull_refuses_a_non_empty_out_and_names_a_missing_canvas_id(setup, tmp_path, capsys):
    source, course_path = setup
    out = tmp_path / "submissions"
    out.mkdir()
    (out / "x").write_text("x")
    status, _, err = pull_week1(source, course_path, out, capsys)
    assert status == 2 and err.count("\n") == 1 and "not empty" in err
    text = course_path.read_text().replace(f"canvas_id = {WEEK1}\n", "")
    course_path.write_text(text)
    status, _, err = pull_week1(source, course_path, tmp_path / "new", capsys)
    assert status == 2 and err == "canvas pull: assignments.week1 has no canvas_id (the number in its Canvas address)\n"


def test_roster_ids_fall_back_to_the_sis_id_then_the_canvas_id_when_unsafe_or_taken():
    users = [
        {"id": 1, "name": "A", "login_id": "../a", "sis_user_id": "S1"},
        {"id": 2, "name": "B", "login_id": "S1", "sis_user_id": None},
        {"id": 3, "name": "C", "login_id": "", "sis_user_id": ""},
        {"id": 4, "name": "D", "login_id": "Roster.CSV", "sis_user_id": "s1"},
    ]
    assert [e.student for e in roster_entries(users, {})] == ["S1", "2", "3", "4"]


# --------------------------------------------------------------------------- push


def graded(source: Path, course_path: Path, tmp_path: Path, capsys) -> tuple[Path, Path, Path]:
    """Pull week 1 and grade it as the commands do: the grader's report (hand-made here, Bob missing a2, instead
    of running the kernels) through ``grade --merge`` with the pulled roster and times, Canvas file and feedback."""
    out = tmp_path / "submissions"
    assert pull_week1(source, course_path, out, capsys)[0] == 0
    rows = [
        GradeRow(s, "01_alpha", ex, *(("failed", 0, 1) if (s, ex) == ("bob", "a2") else ("passed", 1, 1)))
        for s in ("ada", "bob", "chloe", "dan")
        for ex in ("a1", "a2")
    ]
    write_report(rows, tmp_path / "graded.csv")
    feedback = tmp_path / "feedback"
    status, _, err = run(
        capsys,
        "grade",
        "--merge",
        str(tmp_path / "graded.csv"),
        "--report",
        str(tmp_path / "g.csv"),
        "--source",
        str(source),
        "--course",
        str(course_path),
        "--roster",
        str(out / "roster.csv"),
        "--collected",
        str(out / "collected.csv"),
        "--gradebook",
        "canvas",
        "--feedback",
        str(feedback),
    )
    assert (status, err) == (0, "")
    return out / "roster.csv", tmp_path / "g_canvas.csv", feedback


def push_week1(capsys, source: Path, course_path: Path, roster: Path, grades: Path, feedback: Path, *extra: str):
    return run(
        capsys,
        "canvas",
        "push",
        "week1",
        "--course",
        str(course_path),
        "--source",
        str(source),
        "--roster",
        str(roster),
        "--grades",
        str(grades),
        "--feedback",
        str(feedback),
        *extra,
    )


def final_state(server: FakeCanvas) -> dict[str, Any]:
    return {
        "scores": {k: s["score"] for k, s in sorted(server.submissions.items())},
        "comments": {
            k: [
                (c["comment"], [(a["display_name"], server.files[a["id"]]) for a in c["attachments"]])
                for c in s["submission_comments"]
            ]
            for k, s in sorted(server.submissions.items())
        },
    }


def test_push_sets_only_this_assignments_changed_grades_and_posts_each_feedback_once(setup, server, tmp_path, capsys):
    source, course_path = setup
    roster, grades, feedback = graded(source, course_path, tmp_path, capsys)
    server.log.clear()
    status, printed, err = push_week1(capsys, source, course_path, roster, grades, feedback, "--dry-run")
    assert (status, err) == (0, "")
    assert "would set grade: bob (canvas 102): no score → 0.8" in printed
    assert "would post comment: ada (canvas 101): 01_alpha.md" in printed
    assert "canvas push week1 (dry run: nothing sent): 3 grades to set, 1 already right, 4 comments to post" in printed
    assert not server.requests("PUT") and not server.requests("POST")  # a dry run sends nothing
    status, printed, err = push_week1(capsys, source, course_path, roster, grades, feedback)
    assert (status, err) == (0, "")
    # grades: Bob 1 of 2 points, 1 h 10 min late (10 % of 2); Ada's 2 was already there; week 2 and Eve untouched
    puts = [(p, f["submission[posted_grade]"]) for _, p, f in server.requests("PUT") if "submission[posted_grade]" in f]
    assert puts == [
        (f"/api/v1/courses/1/assignments/{WEEK1}/submissions/{u}", [g])
        for u, g in (("102", "0.8"), ("103", "2"), ("104", "2"))
    ]
    scores = {uid: s["score"] for (aid, uid), s in server.submissions.items() if aid == WEEK1}
    assert scores == {101: 2.0, 102: 0.8, 103: 2.0, 104: 2.0, 105: None}
    assert {uid: s["score"] for (aid, uid), s in server.submissions.items() if aid == WEEK2} == {
        101: 5.0,
        102: None,
        103: None,
        104: None,
        105: None,
    }
    # comments: one per student with a feedback file, the file attached, the marker of its digest in the text
    for student, uid in (("ada", 101), ("bob", 102), ("chloe", 103), ("dan", 104)):
        data = (feedback / student / "01_alpha.md").read_bytes()
        [comment] = server.comments(WEEK1, uid)
        assert comment["comment"].endswith(
            feedback_marker(load_course(course_path, OUTLINE).assignment("week1"), "01_alpha", data)
        )
        assert [(a["display_name"], server.files[a["id"]]) for a in comment["attachments"]] == [("01_alpha.md", data)]
    assert server.comments(WEEK1, 105) == [] and all(not server.comments(WEEK2, u) for u in range(101, 106))
    # the upload's second step carries no token
    uploads = server.requests("POST", r"^/upload/")
    assert len(uploads) == 4 and all(f["key"][0].startswith("k") for _, _, f in uploads)
    # a rerun changes nothing and sends nothing
    before = final_state(server)
    server.log.clear()
    status, printed, _ = push_week1(capsys, source, course_path, roster, grades, feedback)
    assert status == 0 and "0 grades set, 4 already right, 0 comments posted" in printed
    assert not server.requests("PUT") and not server.requests("POST")
    assert final_state(server) == before


@pytest.mark.parametrize(
    "failure",
    [
        Failure("PUT", r"/submissions/103$", 500, sent="submission[posted_grade]"),  # among the grades
        Failure("POST", r"/submissions/103/comments/files$", 500),  # an upload's first step
        Failure("PUT", r"/submissions/103$", 502, sent="comment[text_comment]"),  # uploaded, not yet a comment
    ],
    ids=["grade", "upload", "comment"],
)
def test_a_push_that_fails_midway_says_so_in_one_line_and_a_rerun_resumes_without_duplicates(
    setup, server, tmp_path, capsys, failure
):
    source, course_path = setup
    roster, grades, feedback = graded(source, course_path, tmp_path, capsys)
    server.failures.append(failure)
    status, printed, err = push_week1(capsys, source, course_path, roster, grades, feedback)
    assert status == 2 and err.count("\n") == 1 and str(failure.status) in err and "rerun" in err
    assert failure.times == 0
    assert TOKEN not in err + printed
    status, _, err = push_week1(capsys, source, course_path, roster, grades, feedback)
    assert (status, err) == (0, "")
    state = final_state(server)
    assert {k: v for k, v in state["scores"].items() if k[0] == WEEK1} == {
        (WEEK1, 101): 2.0,
        (WEEK1, 102): 0.8,
        (WEEK1, 103): 2.0,
        (WEEK1, 104): 2.0,
        (WEEK1, 105): None,
    }
    assert [len(state["comments"][(WEEK1, u)]) for u in range(101, 106)] == [1, 1, 1, 1, 0]


def test_rate_limits_are_waited_out_within_bounds_and_a_lasting_one_is_one_line(setup, server, tmp_path, capsys):
    source, course_path = setup
    roster, grades, feedback = graded(source, course_path, tmp_path, capsys)
    # Canvas's own throttle (403, X-Rate-Limit-Remaining spent) on a page, a 429 with Retry-After on a PUT
    server.failures += [
        Failure("GET", r"/submissions$", 403, {"X-Rate-Limit-Remaining": "0.0"}, times=2),
        Failure("PUT", r"/submissions/102$", 429, {"Retry-After": "1"}),
    ]
    status, _, err = push_week1(capsys, source, course_path, roster, grades, feedback)
    assert (status, err) == (0, "")
    assert server.submissions[(WEEK1, 102)]["score"] == 0.8
    assert len(server.requests("PUT", r"/submissions/102$")) == 3  # the 429, the grade, the comment
    # a limit that lasts: the retries are bounded, then one line
    server.failures.append(Failure("GET", r"/submissions$", 429, {"Retry-After": "0"}, times=99))
    server.log.clear()
    status, _, err = push_week1(capsys, source, course_path, roster, grades, feedback)
    assert status == 2 and err.count("\n") == 1 and "rate limit" in err
    assert len(server.requests("GET", r"/submissions$")) == canvas_module.RATE_LIMIT_RETRIES + 1


def test_a_long_retry_after_is_waited_only_up_to_the_bound(setup, server, tmp_path, capsys, monkeypatch):
    source, course_path = setup
    roster, grades, feedback = graded(source, course_path, tmp_path, capsys)
    monkeypatch.setattr(canvas_module, "RETRY_AFTER_MAX", 0.2)
    server.failures.append(Failure("PUT", r"/submissions/102$", 429, {"Retry-After": "3600"}))
    started = time.monotonic()
    status, _, err = push_week1(capsys, source, course_path, roster, grades, feedback)
    assert (status, err) == (0, "") and time.monotonic() - started < 60
    assert server.submissions[(WEEK1, 102)]["score"] == 0.8


def test_a_real_403_is_not_retried_and_a_bad_token_or_id_is_one_line_without_the_token(
    setup, server, tmp_path, capsys, monkeypatch, caplog
):
    source, course_path = setup
    caplog.set_level(logging.DEBUG)
    server.failures.append(Failure("GET", r"^/api/v1/courses/1$", 403, {"X-Rate-Limit-Remaining": "650.0"}))
    status, _, err = pull_week1(source, course_path, tmp_path / "a", capsys)
    assert status == 2 and err.count("\n") == 1 and "forbids" in err
    assert len(server.requests("GET", r"^/api/v1/courses/1$")) == 1
    monkeypatch.setenv("CANVAS_TOKEN", "wrong-token-0000")
    status, printed, err = pull_week1(source, course_path, tmp_path / "b", capsys)
    assert status == 2 and err == (
        "canvas pull: Canvas refused the token (401): check CANVAS_TOKEN or --token-file, and that it has not expired\n"
    )
    monkeypatch.setenv("CANVAS_TOKEN", TOKEN)
    course_path.write_text(course_path.read_text().replace(f"canvas_id = {WEEK1}", "canvas_id = 99"))
    status, _, err = pull_week1(source, course_path, tmp_path / "c", capsys)
    assert status == 2 and err.count("\n") == 1 and "404" in err
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "wrong-token-0000" not in logged + printed + err and TOKEN not in logged


def test_push_refuses_a_grades_file_without_the_assignments_column_before_asking_canvas(
    setup, server, tmp_path, capsys
):
    source, course_path = setup
    roster, grades, feedback = graded(source, course_path, tmp_path, capsys)
    server.log.clear()
    status, _, err = run(
        capsys,
        "canvas",
        "push",
        "week2",
        "--course",
        str(course_path),
        "--source",
        str(source),
        "--roster",
        str(roster),
        "--grades",
        str(grades),
    )
    assert status == 2 and err.startswith(f"canvas push: --grades {grades}: no column 'Week 2' and ID")
    assert server.log == []


def test_the_token_comes_from_the_environment_or_a_file_never_a_flag(tmp_path, capsys, setup):
    source, course_path = setup
    assert read_token(None, {"CANVAS_TOKEN": " abc \n"}) == "abc"
    path = tmp_path / "token"
    path.write_text("xyz\n")
    assert read_token(path, {"CANVAS_TOKEN": "abc"}) == "xyz"
    with pytest.raises(CanvasError, match="CANVAS_TOKEN"):
        read_token(None, {})
    with pytest.raises(SystemExit):
        main(["canvas", "pull", "week1", "--course", str(course_path), "--out", str(tmp_path / "o"), "--token", "x"])
    assert "unrecognized arguments: --token" in capsys.readouterr().err


def test_connect_retries_through_canvasapis_session_and_says_which_extra_is_missing(monkeypatch, server):
    canvas = connect(server.url, TOKEN)
    adapter = canvas._Canvas__requester._session.get_adapter(server.url)
    assert adapter.max_retries.total == canvas_module.RATE_LIMIT_RETRIES
    monkeypatch.setitem(__import__("sys").modules, "canvasapi", None)
    with pytest.raises(CanvasError, match=r"pip install 'dpcourse\[canvas\]'"):
        connect(server.url, TOKEN)


# --------------------------------------------------------------------------- pulled, graded, pushed

FLOW_COURSE = """
[late]
grace_minutes = 15
penalty_per_day = 0.25
max_penalty = 0.5

[canvas]
url = "{url}"
course_id = 1

[assignments.week1]
name = "Week 1"
notebooks = ["small"]
due = 2026-10-05T23:59:00+00:00
canvas_id = 10

[assignments.week2]
name = "Week 2"
notebooks = ["second"]
due = 2026-10-12T23:59:00+00:00
canvas_id = 11

[extensions.chloe]
week1 = 2026-10-08T23:59:00+00:00
"""


def flow_course(server: FakeCanvas) -> None:
    """Two assignments of the small workbook (three exercises of 1 point), handed in as Canvas holds them.

    Week 1 (due 5 October 23:59): Ada right, on time; Bob right, 1 day 2 h 1 min late (two started days);
    Chloé right, late for Canvas but within her extension; Dan wrong, then right 10 minutes after the due time
    (within the 15 minutes' grace), as ``small-1.ipynb``; Eve nothing. Week 2: Ada right (Canvas already has her
    3), Bob wrong, the others nothing.
    """

    def upload(file_id: int, name: str, notebook: Any) -> dict[str, Any]:
        return server.attachment(file_id, name, nbformat.writes(notebook).encode())

    def attempt(when: str, seconds_late: int, *files: dict[str, Any]) -> dict[str, Any]:
        return {"submitted_at": when, "late": seconds_late > 0, "seconds_late": seconds_late, "attachments": files}

    wrong = with_answers(released(), **WRONG)
    server.submission(WEEK1, 101, [attempt("2026-10-05T21:00:00Z", 0, upload(3101, "small.ipynb", right()))])
    server.submission(WEEK1, 102, [attempt("2026-10-07T02:00:00Z", 93660, upload(3201, "small.ipynb", right()))])
    server.submission(WEEK1, 103, [attempt("2026-10-07T12:00:00Z", 130860, upload(3301, "small.ipynb", right()))])
    server.submission(
        WEEK1,
        104,
        [
            attempt("2026-10-04T10:00:00Z", 0, upload(3401, "small.ipynb", wrong)),
            attempt("2026-10-06T00:09:00Z", 600, upload(3402, "small-1.ipynb", right())),
        ],
    )
    server.submission(WEEK1, 105, [])
    server.submission(
        WEEK2, 101, [attempt("2026-10-12T20:00:00Z", 0, upload(3501, "second.ipynb", right()))], score=3.0, grade="3"
    )
    server.submission(WEEK2, 102, [attempt("2026-10-12T21:00:00Z", 0, upload(3601, "second.ipynb", wrong))])
    for uid in (103, 104, 105):
        server.submission(WEEK2, uid, [])


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_course_pulled_graded_by_its_kernels_and_pushed_ends_exactly_right_and_a_rerun_sends_nothing(
    server, tmp_path, monkeypatch, capsys
):
    flow_course(server)
    source = tmp_path / "source"
    source.mkdir()
    for stem in ("small", "second"):
        nbformat.write(source_notebook(), source / f"{stem}.ipynb")
    course_path = tmp_path / "course.toml"
    course_path.write_text(FLOW_COURSE.format(url=server.url), encoding="utf-8")
    monkeypatch.setenv("CANVAS_TOKEN", TOKEN)
    monkeypatch.setattr(canvas_module, "BACKOFF", 0.01)
    # pull both assignments, as an instructor does: nothing written by hand from here to the push
    for week in ("week1", "week2"):
        pulled = ["canvas", "pull", week, "--course", str(course_path), "--source", str(source)]
        assert run(capsys, *pulled, "--out", str(tmp_path / week))[::2] == (0, "")
    roster = tmp_path / "week1" / "roster.csv"
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.glob("week*/*/*.ipynb")) == [
        "week1/ada/small.ipynb",
        "week1/bob/small.ipynb",
        "week1/chloe/small.ipynb",
        "week1/dan/small.ipynb",
        "week2/ada/second.ipynb",
        "week2/bob/second.ipynb",
    ]
    # grade each for real: every notebook run by a kernel, with the course file and the times pulled
    feedback = tmp_path / "feedback"
    for week in ("week1", "week2"):
        status = grade_command(
            [
                "grade",
                *(str(p) for p in sorted((tmp_path / week).glob("*/*.ipynb"))),
                *("--source", str(source), "--course", str(course_path), "--roster", str(roster)),
                *("--collected", str(tmp_path / week / "collected.csv")),
                *("--sandbox", "none", "--jobs", jobs_for("none"), "--cell-timeout", "60"),
                *("--gradebook", "canvas", "--feedback", str(feedback), "--report", str(tmp_path / f"{week}.csv")),
            ]
        )
        assert status == 0
    capsys.readouterr()  # graded in this process (an ordinary user's run): its progress is not the push's

    def push(week: str) -> tuple[int, str, str]:
        return run(
            capsys,
            *("canvas", "push", week, "--course", str(course_path), "--source", str(source), "--roster", str(roster)),
            *("--grades", str(tmp_path / f"{week}_canvas.csv"), "--feedback", str(feedback)),
        )

    def received(week: int) -> dict[int, tuple[float | None, list[tuple[str, list[tuple[str, bytes]]]]]]:
        state = final_state(server)
        return {
            uid: (state["scores"][(aid, uid)], state["comments"][(aid, uid)])
            for aid, uid in state["scores"]
            if aid == week
        }

    course = load_course(course_path, read_outline(source))

    def comment(week: str, student: str, notebook: str) -> tuple[str, list[tuple[str, bytes]]]:
        data = (feedback / student / f"{notebook}.md").read_bytes()
        assignment = course.assignment(week)
        marker = feedback_marker(assignment, notebook, data)
        text = f"Feedback on {notebook} ({assignment.name}), attached as {notebook}.md.\n\n{marker}"
        return text, [(f"{notebook}.md", data)]

    # week 1: Bob loses 50 % of 3 points (two started days, counted to the minute from the submitted_at pulled;
    # without it, Canvas's late mark would cost one day, 0.75, and nothing at all without the mark); Chloé nothing
    # (her extension); Dan nothing (10 minutes late, within the grace: his late mark alone would cost 0.75) and his
    # second attempt is the one graded (his first scores 0); Eve handed nothing in and is sent nothing
    server.log.clear()
    status, printed, err = push("week1")
    assert (status, err) == (0, ""), printed
    puts = [(p, f["submission[posted_grade]"]) for _, p, f in server.requests("PUT") if "submission[posted_grade]" in f]
    assert puts == [
        (f"/api/v1/courses/1/assignments/{WEEK1}/submissions/{uid}", [grade])
        for uid, grade in ((101, "3"), (102, "1.5"), (103, "3"), (104, "3"))
    ]
    assert received(WEEK1) == {
        101: (3.0, [comment("week1", "ada", "small")]),
        102: (1.5, [comment("week1", "bob", "small")]),
        103: (3.0, [comment("week1", "chloe", "small")]),
        104: (3.0, [comment("week1", "dan", "small")]),
        105: (None, []),
    }
    assert received(WEEK2) == {101: (3.0, []), **{uid: (None, []) for uid in range(102, 106)}}  # untouched
    # week 2, with Canvas failing midway (Bob's comment, after its file was uploaded): one line, then a rerun
    server.failures.append(Failure("PUT", rf"/assignments/{WEEK2}/submissions/102$", 500, sent="comment[text_comment]"))
    server.log.clear()
    status, printed, err = push("week2")
    assert status == 2 and err.count("\n") == 1 and "500" in err and "rerun" in err
    assert server.submissions[(WEEK2, 102)]["score"] == 0.0 and server.comments(WEEK2, 102) == []
    status, printed, err = push("week2")
    assert (status, err) == (0, "")
    assert "0 grades set, 2 already right, 1 comments posted" in printed
    puts = [(p, f["submission[posted_grade]"]) for _, p, f in server.requests("PUT") if "submission[posted_grade]" in f]
    assert puts == [(f"/api/v1/courses/1/assignments/{WEEK2}/submissions/102", ["0"])]  # Ada's 3 was there
    expected_week2 = {
        101: (3.0, [comment("week2", "ada", "second")]),
        102: (0.0, [comment("week2", "bob", "second")]),
        **{uid: (None, []) for uid in range(103, 106)},
    }
    assert received(WEEK2) == expected_week2
    # a rerun of both pushes sends nothing and changes nothing
    before = final_state(server)
    server.log.clear()
    for week, already in (("week1", 4), ("week2", 2)):
        status, printed, _ = push(week)
        assert status == 0 and f"0 grades set, {already} already right, 0 comments posted" in printed
    assert not server.requests("PUT") and not server.requests("POST")
    assert final_state(server) == before
    # what the students were sent says why: Bob's lateness to the minute, Dan's grace and older attempt, Chloé
    # nothing about lateness
    bob, dan, chloe = ((feedback / s / "small.md").read_text() for s in ("bob", "dan", "chloe"))
    assert (
        "handed in 1 day 2 h 1 min late (due 2026-10-05T23:59+00:00, handed in 2026-10-07T02:00+00:00): 2 days at "
        "25 % a day, 50 % of its 3 points: −1.5 points." in bob
    )
    assert "10 min after the due time" in dan and "within the grace period: no penalty" in dan
    assert "104/attempt 1/3401 small.ipynb: set aside by the collector (older submission" in dan
    assert "late" not in chloe and "penalty" not in chloe


# --------------------------------------------------------------------------- the course file's [canvas]


@pytest.mark.parametrize(
    ("table", "line"),
    [
        (
            '[canvas]\nurl = "http://canvas.example.edu"\ncourse_id = 1\n',
            "canvas.url: 'http://canvas.example.edu' is not allowed",
        ),
        ('[canvas]\nurl = "https://canvas.example.edu/courses/1"\ncourse_id = 1\n', "canvas.url:"),
        (
            '[canvas]\nurl = "https://canvas.example.edu"\ncourse_id = 0\n',
            "canvas.course_id: must be a whole number from 1",
        ),
        ('[canvas]\nurl = "https://canvas.example.edu"\n', "canvas.course_id: missing"),
        ('[canvas]\nurl = "https://canvas.example.edu"\ncourse_id = 1\ntoken = "x"\n', "canvas.token: unknown key"),
    ],
)
def test_a_malformed_canvas_table_is_refused_naming_the_key(tmp_path, table, line):
    path = tmp_path / "course.toml"
    path.write_text(table + '[assignments.w]\nnotebooks = ["01_alpha"]\ndue = 2026-10-05T23:59:00+00:00\n')
    with pytest.raises(CourseError, match=re.escape(line)):
        load_course(path, OUTLINE)


def test_canvas_ids_are_read_checked_and_unique(tmp_path):
    path = tmp_path / "course.toml"
    head = '[canvas]\nurl = "https://canvas.example.edu/"\ncourse_id = 7\n'
    path.write_text(
        head + '[assignments.w]\nnotebooks = ["01_alpha"]\ndue = 2026-10-05T23:59:00+00:00\ncanvas_id = 5\n'
    )
    course = load_course(path, OUTLINE)
    assert (course.canvas.url, course.canvas.course_id, course.assignment("w").canvas_id) == (
        "https://canvas.example.edu",
        7,
        5,
    )
    path.write_text(
        head + '[assignments.w]\nnotebooks = ["01_alpha"]\ndue = 2026-10-05T23:59:00+00:00\ncanvas_id = 5\n'
        '[assignments.v]\nnotebooks = ["02_beta"]\ndue = 2026-10-05T23:59:00+00:00\ncanvas_id = 5\n'
    )
    with pytest.raises(CourseError, match="assignments.v.canvas_id: 5 is already the canvas_id of assignments.w"):
        load_course(path, OUTLINE)
    path.write_text('[assignments.w]\nnotebooks = ["01_alpha"]\ndue = 2026-10-05T23:59:00+00:00\ncanvas_id = "5"\n')
    with pytest.raises(CourseError, match="assignments.w.canvas_id: must be a whole number"):
        load_course(path, OUTLINE)
