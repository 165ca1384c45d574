"""``dpcourse mark REPORT``: the marking app, a tornado server on 127.0.0.1 over ``<REPORT>.marks.sqlite``.

Access as JupyterLab's: the printed URL carries ``?token=…``; the first request with it sets a signed cookie and
redirects to the same page without it. Every write request carries tornado's XSRF token (``X-XSRFToken``), every
page a Content-Security-Policy that loads scripts, styles and fonts from the app only and runs no inline script.
MathJax is served by the app from an installed copy (see :func:`find_mathjax`); without one, formulas are shown
as their TeX source and the page says so.
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import json
import os
import secrets
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import tornado.httpserver
import tornado.netutil
import tornado.web

from .render import render_answer
from .store import (
    StaleWrite,
    Store,
    add_item,
    edit_item,
    groups,
    open_store,
    question,
    questions,
    save_mark,
    store_path,
)

__all__ = ["CSP", "find_mathjax", "make_app", "run"]

HERE = Path(__file__).resolve().parent
#: Where a checkout keeps the MathJax that ``make book`` installs with npm.
CHECKOUT_MATHJAX = HERE.parents[2] / "book" / "npm" / "node_modules" / "mathjax" / "es5"
#: Other places a MathJax 3 may be installed (Debian's node-mathjax-full).
SYSTEM_MATHJAX = (Path("/usr/share/nodejs/mathjax-full/es5"), Path("/usr/lib/node_modules/mathjax/es5"))
#: The pages' Content-Security-Policy: nothing from elsewhere, no inline script, no plugin, no framing. Inline
#: *styles* are allowed because MathJax's CHTML output sets them; students' text never reaches a style attribute.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; font-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
_AUTH_COOKIE = "dpcourse-mark"
_MARKER_COOKIE = "dpcourse-marker"


def find_mathjax(explicit: Path | str | None = None) -> Path | None:
    """The folder of an installed MathJax 3 (holding ``tex-chtml.js``), or ``None``.

    Looked for in ``explicit`` (then it must be one), ``$DPCOURSE_MATHJAX``, the checkout's
    ``book/npm/node_modules/mathjax/es5`` and :data:`SYSTEM_MATHJAX`.

    Parameters
    ----------
    explicit : pathlib.Path or str or None, optional
        A folder given on the command line (``--mathjax``).

    Returns
    -------
    pathlib.Path or None

    Raises
    ------
    ValueError
        When ``explicit`` has no ``tex-chtml.js``.
    """
    if explicit is not None:
        folder = Path(explicit)
        if not (folder / "tex-chtml.js").is_file():
            raise ValueError(f"--mathjax must be a MathJax 3 folder holding tex-chtml.js; got {folder}")
        return folder
    candidates = [os.environ.get("DPCOURSE_MATHJAX"), CHECKOUT_MATHJAX, *SYSTEM_MATHJAX]
    for candidate in candidates:
        if candidate and (Path(candidate) / "tex-chtml.js").is_file():
            return Path(candidate)
    return None


class _Handler(tornado.web.RequestHandler):
    """Token authentication, security headers and the shared template values."""

    @property
    def store(self) -> Store:
        return self.settings["store"]

    def set_default_headers(self) -> None:
        self.set_header("Content-Security-Policy", CSP)
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_header("Referrer-Policy", "no-referrer")
        self.set_header("X-Frame-Options", "DENY")
        self.set_header("Cache-Control", "no-store")

    def prepare(self) -> None:
        token = self.get_query_argument("token", None)
        if token is not None and hmac.compare_digest(token.encode(), self.settings["token"].encode()):
            self.set_signed_cookie(_AUTH_COOKIE, "1", httponly=True, samesite="Strict", path=self.settings["base"])
            rest = {k: v[-1].decode() for k, v in self.request.query_arguments.items() if k != "token"}
            self.redirect(self.request.path + (f"?{urlencode(rest)}" if rest else ""))
            return
        if self.get_signed_cookie(_AUTH_COOKIE) != b"1":
            self.set_status(403)
            self.finish("Forbidden: open the URL with ?token= that `dpcourse mark` printed.")

    def get_current_user(self) -> str | None:
        name = self.get_signed_cookie(_MARKER_COOKIE)
        return name.decode() if name else None

    def get_template_namespace(self) -> dict[str, Any]:
        namespace = super().get_template_namespace()
        namespace.update(base=self.settings["base"], mathjax=self.settings["mathjax"] is not None)
        return namespace

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        self.finish({"error": self._reason})


class _Index(_Handler):
    def get(self) -> None:
        self.render("index.html", questions=questions(self.store))


class _Name(_Handler):
    def post(self) -> None:
        name = " ".join(self.get_body_argument("name", "").split())[:100]
        if name:
            self.set_signed_cookie(_MARKER_COOKIE, name, httponly=True, samesite="Strict", path=self.settings["base"])
        back = self.get_body_argument("next", "")
        inside = back.startswith(self.settings["base"]) and not back.startswith("//") and "\\" not in back
        self.redirect(back if name and inside else self.settings["base"])


class _Question(_Handler):
    def get(self, exercise: str) -> None:
        try:
            q = question(self.store, exercise)
        except ValueError:
            raise tornado.web.HTTPError(404, reason=f"no written exercise {exercise!r}") from None
        found = groups(self.store, exercise)
        asked = self.get_query_argument("g", "0")
        index = min(max(int(asked) if asked.isdigit() else 0, 0), max(len(found) - 1, 0))
        names = self.get_query_argument("names", "0") == "1"
        group = found[index] if found else None
        self.render(
            "question.html",
            q=q,
            group=group,
            index=index,
            count=len(found),
            names=names,
            answer_html=render_answer(group.text, cut_from=group.cut_from) if group else "",
            prompt_html=render_answer(q.prompt),
            model_html=render_answer(q.model_answer),
            marker=self.current_user,
        )


def _json(handler: _Handler) -> dict[str, Any]:
    try:
        body = json.loads(handler.request.body or b"{}")
    except ValueError:
        raise tornado.web.HTTPError(400, reason="the request body must be JSON") from None
    if not isinstance(body, dict):
        raise tornado.web.HTTPError(400, reason="the request body must be a JSON object")
    if not handler.current_user:
        raise tornado.web.HTTPError(403, reason="say who is marking first (the name field on the first page)")
    return body


class _Write(_Handler):
    """A JSON write: 200 with the result, 409 with the message for a stale write, 400 for bad values."""

    def act(self, body: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def post(self) -> None:
        body = _json(self)
        try:
            self.finish(self.act(body))
        except StaleWrite as err:
            self.set_status(409)
            self.finish({"error": str(err)})
        except (TypeError, ValueError, KeyError) as err:
            self.set_status(400)
            self.finish({"error": str(err)})


class _SaveMark(_Write):
    def act(self, body: dict[str, Any]) -> dict[str, Any]:
        exercise, key = body["exercise"], body["group"]
        mark = save_mark(
            self.store,
            exercise,
            key,
            items=list(body.get("items", [])),
            comment=body.get("comment", ""),
            adjustment=float(body.get("adjustment") or 0),
            marker=self.current_user,
            expected_version=body["version"],
        )
        group = next(g for g in groups(self.store, exercise) if g.key == key)
        q = question(self.store, exercise)
        progress = f"Marked: {q.groups_marked} of {q.groups} groups, {q.answers_marked} of {q.answers} answers."
        return {
            "version": mark.version,
            "raw": group.raw,
            "points": group.points,
            "marked_by": mark.marked_by,
            "progress": progress,
        }


class _EditItem(_Write):
    def act(self, body: dict[str, Any]) -> dict[str, Any]:
        points = body.get("points")
        item, version = edit_item(
            self.store,
            body["exercise"],
            body["item"],
            text=body.get("text"),
            points=None if points in (None, "") else float(points),
            editor=self.current_user,
            expected_version=body["version"],
        )
        return {"item": item.id, "text": item.text, "points": item.points, "version": version}


class _AddItem(_Write):
    def act(self, body: dict[str, Any]) -> dict[str, Any]:
        item = add_item(
            self.store,
            body["exercise"],
            text=body.get("text", ""),
            points=float(body.get("points") or 0),
            editor=self.current_user,
        )
        return {"item": item.id, "text": item.text, "points": item.points}


class _MathJax(tornado.web.StaticFileHandler):
    """MathJax's files, behind the same token as the pages."""

    def prepare(self) -> None:
        if self.get_signed_cookie(_AUTH_COOKIE) != b"1":
            raise tornado.web.HTTPError(403)


def make_app(store: Store, *, token: str, mathjax: Path | None = None, base_url: str = "/") -> tornado.web.Application:
    """The tornado application over an open store.

    Parameters
    ----------
    store : Store
        The marks database (:func:`~.store.open_store`).
    token : str
        What ``?token=`` must carry (at least 16 characters).
    mathjax : pathlib.Path or None, optional
        A MathJax 3 folder to serve at ``<base>mathjax/`` (``None``: formulas shown as TeX source).
    base_url : str, optional
        The prefix every route is under (``/services/mark/`` as a JupyterHub service).

    Returns
    -------
    tornado.web.Application

    Raises
    ------
    ValueError
        For a token shorter than 16 characters.
    """
    if len(token) < 16:
        raise ValueError("token must be at least 16 characters")
    base = "/" + base_url.strip("/") + "/" if base_url.strip("/") else "/"
    routes: list[Any] = [
        (base, _Index),
        (f"{base}name", _Name),
        (rf"{base}q/([A-Za-z0-9][A-Za-z0-9_.-]*)", _Question),
        (f"{base}api/mark", _SaveMark),
        (f"{base}api/item", _EditItem),
        (f"{base}api/item/add", _AddItem),
    ]
    if mathjax is not None:
        routes.append((rf"{base}mathjax/(.*)", _MathJax, {"path": str(mathjax)}))
    return tornado.web.Application(
        routes,
        store=store,
        token=token,
        base=base,
        mathjax=mathjax,
        cookie_secret=secrets.token_bytes(32),
        xsrf_cookies=True,
        xsrf_cookie_kwargs={"samesite": "Strict", "path": base},
        template_path=str(HERE / "templates"),
        static_path=str(HERE / "static"),
        static_url_prefix=f"{base}static/",
        autoescape="xhtml_escape",
    )


async def _serve(app: tornado.web.Application, port: int, token: str) -> None:
    sockets = tornado.netutil.bind_sockets(port, address="127.0.0.1")
    server = tornado.httpserver.HTTPServer(app)
    server.add_sockets(sockets)
    port = sockets[0].getsockname()[1]
    print(f"marking at http://127.0.0.1:{port}{app.settings['base']}?token={token}", flush=True)
    await asyncio.Event().wait()


def run(args: argparse.Namespace) -> int:
    """``dpcourse mark``: serve the app until Ctrl-C (its parser is :mod:`dpcourse.classroom.cli.mark`'s).

    Parameters
    ----------
    args : argparse.Namespace
        ``report``, ``port``, ``token``, ``mathjax`` and ``base_url``, as ``dpcourse mark`` parses them.

    Returns
    -------
    int
        0 after Ctrl-C, 2 when there is no marks database or an option is bad.
    """
    path = store_path(args.report)
    try:
        store = open_store(path, create=False)
        mathjax = find_mathjax(args.mathjax)
        token = args.token or secrets.token_urlsafe(24)
        app = make_app(store, token=token, mathjax=mathjax, base_url=args.base_url)
    except (OSError, ValueError) as err:
        print(f"mark: {err}", file=sys.stderr)
        return 2
    if mathjax is None:
        print(
            "mark: no MathJax found (make book's npm step installs one; or --mathjax DIR): formulas are shown "
            "as TeX source",
            file=sys.stderr,
        )
    print(f"mark: {path}", flush=True)
    try:
        asyncio.run(_serve(app, args.port, token))
    except KeyboardInterrupt:
        pass
    finally:
        store.close()
    return 0
