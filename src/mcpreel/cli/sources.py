"""What ``contract`` and ``audit`` judge: a recording on disk, or a live server (a command or a URL)."""

from __future__ import annotations

from dataclasses import dataclass

from mcpreel.clients.headers import parse_headers
from mcpreel.errors import UsageError
from mcpreel.model import Session


@dataclass(frozen=True)
class SourceArgs:
    """What the shared source options (``contract_cmd.source_options``) said, as one record
    (:func:`mcpreel.cli.records.options_record`): where the session to judge comes from when it is not
    a file, and how it is read or asked."""

    command: str | None
    url: str | None
    transport: str
    headers: tuple[str, ...]
    input_format: str
    timeout: float
    capabilities: str | None = None

    def open(self, source: str | None) -> tuple[Session, str]:
        """The session these options and ``source`` name (see :func:`open_source`)."""
        return open_source(source, command=self.command, url=self.url, fmt=self.input_format,
                           transport=self.transport, headers=self.headers, timeout=self.timeout,
                           capabilities=self.capabilities)


def is_url(text: str) -> bool:
    """Whether a source names a live server by URL rather than a file or a command."""
    return text.startswith(("http://", "https://"))


def open_source(source: str | None, *, command: str | None, url: str | None, fmt: str = "auto",
                transport: str = "auto", headers: tuple[str, ...] = (), timeout: float = 30.0,
                capabilities: str | None = None) -> tuple[Session, str]:
    """The session to judge and a name for it: a file read by its format, or a live server's answers.

    ``capabilities``: ``--capabilities`` as given (None: the usual client's; see
    :func:`mcpreel.contract.live.parse_capabilities`), for a live server only."""
    if source and is_url(source):
        if url:
            raise UsageError("give the server's URL once (as SOURCE or --target-url)")
        source, url = None, source
    given = [x for x in (source, command, url) if x]
    if len(given) != 1:
        raise UsageError("give exactly one source: a recording, --target-command 'CMD ARGS', or a URL")
    if source:
        if capabilities is not None:
            raise UsageError("--capabilities is what a live server is told: give --target-command or a URL, "
                             "not a recording")
        from mcpreel.formats import open_session

        session, _ = open_session(source, fmt)
        return session, source
    from mcpreel.contract.live import live_session, parse_capabilities

    session = live_session(command, url, transport=transport, headers=parse_headers(headers), timeout=timeout,
                           capabilities=parse_capabilities(capabilities))
    return session, command or url or ""


def sarif_target(source: str | None, command: str | None, url: str | None):
    """Where SARIF results about a live server are located (None for a recording: the file is the location).

    Inside GitHub Actions the workflow that names the server is a candidate (``GITHUB_WORKFLOW_REF``).
    """
    import os

    from mcpreel.render.sarif import live_target

    if source and is_url(source):
        url = source
    if not (command or url):
        return None
    return live_target(command=command, url=url, workflow_ref=os.environ.get("GITHUB_WORKFLOW_REF"))
