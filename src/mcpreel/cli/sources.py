"""What ``contract`` and ``audit`` judge: a recording on disk, or a live server (a command or a URL)."""

from __future__ import annotations

from mcpreel.clients.headers import parse_headers
from mcpreel.errors import UsageError
from mcpreel.model import Session


def is_url(text: str) -> bool:
    return text.startswith(("http://", "https://"))


def open_source(source: str | None, *, command: str | None, url: str | None, fmt: str = "auto",
                transport: str = "auto", headers: tuple[str, ...] = (), timeout: float = 30.0) -> tuple[Session, str]:
    """The session to judge and a name for it: a file read by its format, or a live server's answers."""
    if source and is_url(source):
        if url:
            raise UsageError("give the server's URL once (as SOURCE or --url)")
        source, url = None, source
    given = [x for x in (source, command, url) if x]
    if len(given) != 1:
        raise UsageError("give exactly one source: a recording, --command 'CMD ARGS', or a URL")
    if source:
        from mcpreel.formats import open_session

        session, _ = open_session(source, fmt)
        return session, source
    from mcpreel.contract.live import live_session

    session = live_session(command, url, transport=transport, headers=parse_headers(headers), timeout=timeout)
    return session, command or url or ""
