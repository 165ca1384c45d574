"""The marking app's HTTP side: the token, the cookie, the CSRF check, the security headers and the JSON writes."""

from __future__ import annotations

import json
import re
import tempfile
import threading
from pathlib import Path

import pytest
from tornado.testing import AsyncHTTPTestCase

from dpcourse.classroom.cli import main
from dpcourse.classroom.marking.app import CSP, find_mathjax, make_app
from dpcourse.classroom.marking.export import marks
from dpcourse.classroom.marking.store import add_answers, groups, open_store, store_path
from dpcourse.classroom.marking.written import check_rubric

TOKEN = "a-test-token-of-enough-length"


class _OwnThread(AsyncHTTPTestCase):
    """Each test runs in a thread of its own, with a loop of its own: ``make test`` may run this file in a worker
    where the browser suite's Playwright (its sync API) keeps an event loop running in the main thread, and tornado's
    test case cannot start its loop beside a running one."""

    def run(self, result=None):
        done = []
        thread = threading.Thread(target=lambda: done.append(super(_OwnThread, self).run(result)))
        thread.start()
        thread.join()
        return done[0] if done else None


class MarkingApp(_OwnThread):
    def get_app(self):
        self.folder = tempfile.TemporaryDirectory()
        self.store = open_store(store_path(Path(self.folder.name) / "grades.csv"))
        rubric = check_rubric(2, [{"id": "ok", "text": "Right", "points": 2}])
        add_answers(self.store, "q1", rubric, [("ann", "<script>alert(1)</script> answer"), ("ben", "other")])
        return make_app(self.store, token=TOKEN, mathjax=None)

    def tearDown(self):
        super().tearDown()
        self.store.close()
        self.folder.cleanup()

    def login(self, name="Ayesha"):
        response = self.fetch(f"/?token={TOKEN}", follow_redirects=False)
        assert response.code == 302 and response.headers["Location"] == "/"
        self.cookies = {}
        for header in response.headers.get_list("Set-Cookie"):
            key, value = header.split(";")[0].split("=", 1)
            self.cookies[key] = value
        page = self.fetch("/", headers=self.cookie_header())
        for header in page.headers.get_list("Set-Cookie"):
            key, value = header.split(";")[0].split("=", 1)
            self.cookies[key] = value
        self.xsrf = re.search(r'<meta name="xsrf" content="([^"]+)"', page.body.decode()).group(1)
        named = self.fetch(
            "/name",
            method="POST",
            body=f"name={name}&_xsrf={self.xsrf}",
            headers=self.cookie_header(),
            follow_redirects=False,
        )
        assert named.code == 302
        for header in named.headers.get_list("Set-Cookie"):
            key, value = header.split(";")[0].split("=", 1)
            self.cookies[key] = value

    def cookie_header(self, **extra):
        return {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items()), **extra}

    def post_json(self, path, body, *, xsrf=True):
        headers = self.cookie_header(**({"X-XSRFToken": self.xsrf} if xsrf else {}))
        return self.fetch(path, method="POST", body=json.dumps(body), headers=headers)

    def test_without_the_token_nothing_is_served(self):
        assert self.fetch("/").code == 403
        assert self.fetch("/q/q1").code == 403
        assert self.fetch("/?token=wrong-token-wrong-token").code == 403

    def test_the_token_sets_a_cookie_and_every_page_carries_the_policy(self):
        self.login()
        page = self.fetch("/q/q1", headers=self.cookie_header())
        assert page.code == 200 and page.headers["Content-Security-Policy"] == CSP
        assert "script-src 'self';" in CSP and "unsafe-inline" not in CSP.split("script-src")[1].split(";")[0]
        assert page.headers["X-Frame-Options"] == "DENY" and page.headers["Referrer-Policy"] == "no-referrer"
        body = page.body.decode()
        assert "&lt;script&gt;alert(1)" in body and "<script>alert" not in body
        assert "ann" not in body and "names hidden" in body  # anonymous by default
        assert "MathJax was not found" in body

    def test_a_write_without_the_csrf_token_is_refused(self):
        self.login()
        key = groups(self.store, "q1")[0].key
        refused = self.post_json(
            "/api/mark", {"exercise": "q1", "group": key, "items": ["ok"], "version": 0}, xsrf=False
        )
        assert refused.code == 403 and all(r.points is None for r in marks(self.store))

    def test_a_mark_is_saved_and_a_stale_one_refused_with_the_name(self):
        self.login()
        key = groups(self.store, "q1")[0].key
        saved = self.post_json("/api/mark", {"exercise": "q1", "group": key, "items": ["ok"], "version": 0})
        assert saved.code == 200 and json.loads(saved.body) == {
            "version": 1,
            "raw": 2.0,
            "points": 2.0,
            "marked_by": "Ayesha",
            "progress": "Marked: 1 of 2 groups, 1 of 2 answers.",
        }
        stale = self.post_json("/api/mark", {"exercise": "q1", "group": key, "items": [], "version": 0})
        assert stale.code == 409 and "saved by Ayesha" in json.loads(stale.body)["error"]
        bad = self.post_json("/api/mark", {"exercise": "q1", "group": key, "items": ["nope"], "version": 1})
        assert bad.code == 400 and "not rubric items" in json.loads(bad.body)["error"]

    def test_rubric_items_are_edited_and_added_through_the_api(self):
        self.login()
        edited = self.post_json("/api/item", {"exercise": "q1", "item": "ok", "points": "1.5", "version": 1})
        assert edited.code == 200 and json.loads(edited.body)["version"] == 2
        stale = self.post_json("/api/item", {"exercise": "q1", "item": "ok", "text": "x", "version": 1})
        assert stale.code == 409 and "saved by Ayesha" in json.loads(stale.body)["error"]
        added = self.post_json("/api/item/add", {"exercise": "q1", "text": "Cites a lemma", "points": "1"})
        assert added.code == 200 and json.loads(added.body)["item"] == "item-1"

    def test_a_bad_group_number_shows_the_first_and_next_never_leaves_the_app(self):
        self.login()
        assert self.fetch("/q/q1?g=zzz", headers=self.cookie_header()).code == 200
        assert self.fetch("/q/nope", headers=self.cookie_header()).code == 404
        away = self.fetch(
            "/name",
            method="POST",
            body=f"name=Bo&next=//evil.example/&_xsrf={self.xsrf}",
            headers=self.cookie_header(),
            follow_redirects=False,
        )
        assert away.code == 302 and away.headers["Location"] == "/"


def test_mathjax_is_looked_for_and_a_wrong_folder_refused(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="tex-chtml.js"):
        find_mathjax(tmp_path)
    (tmp_path / "tex-chtml.js").write_text("// MathJax")
    monkeypatch.setenv("DPCOURSE_MATHJAX", str(tmp_path))
    monkeypatch.setattr("dpcourse.classroom.marking.app.CHECKOUT_MATHJAX", tmp_path / "none")
    assert find_mathjax() == tmp_path


def test_mark_without_a_marks_database_says_so(tmp_path, capsys):
    assert main(["mark", str(tmp_path / "grades.csv"), "--port", "0"]) == 2
    assert "no marks database at" in capsys.readouterr().err


def test_dpcourse_mark_is_a_command_of_the_cli_whose_parser_lives_there(capsys):
    """``dpcourse mark`` is wired like every command: its parser in cli/, the app's ``run`` behind it."""
    import dpcourse.classroom.cli.mark as mark_cli
    import dpcourse.classroom.marking.app as app

    with pytest.raises(SystemExit) as exit_:
        main(["mark", "--help"])
    assert exit_.value.code == 0
    shown = capsys.readouterr().out
    assert all(option in shown for option in ("REPORT".lower(), "--port", "--token", "--mathjax", "--base-url"))
    assert mark_cli.run is app.run and not hasattr(app, "add_mark_command")


def test_a_short_token_is_refused(tmp_path):
    store = open_store(tmp_path / "m.sqlite")
    try:
        with pytest.raises(ValueError, match="at least 16"):
            make_app(store, token="short")
    finally:
        store.close()


class UnderAPrefix(_OwnThread):
    """As a JupyterHub service (``/services/mark/``) or behind jupyter-server-proxy's ``/proxy/absolute/<port>/``."""

    def get_app(self):
        self.folder = tempfile.TemporaryDirectory()
        self.store = open_store(Path(self.folder.name) / "m.sqlite")
        add_answers(self.store, "q1", check_rubric(1, []), [("ann", "a")])
        return make_app(self.store, token=TOKEN, base_url="services/mark")

    def tearDown(self):
        super().tearDown()
        self.store.close()
        self.folder.cleanup()

    def test_every_route_and_link_is_under_the_prefix(self):
        response = self.fetch(f"/services/mark/?token={TOKEN}", follow_redirects=False)
        assert response.code == 302 and response.headers["Location"] == "/services/mark/"
        assert "Path=/services/mark/" in response.headers["Set-Cookie"]
        cookie = response.headers["Set-Cookie"].split(";")[0]
        page = self.fetch("/services/mark/", headers={"Cookie": cookie}).body.decode()
        assert 'href="/services/mark/q/q1"' in page and "/services/mark/static/app.css" in page
        assert self.fetch(f"/?token={TOKEN}").code == 404
