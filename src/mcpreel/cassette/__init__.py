"""Cassettes: a recording that stands in for an MCP server in a test, recorded as a record mode says.

- :mod:`.mode`: :class:`RecordMode` (once, new_episodes, none, all), vcrpy's four;
- :mod:`.run`: one run in the serving process — :func:`~.run.plan` what the mode means for the cassette
  on disk, then replay it through the mock or record the real server through the recording proxy
  (``mcpreel serve CASSETTE --record-mode MODE``);
- :mod:`.server`: the test's side — :func:`~.server.cassette_server` gives a test a stdio command to
  launch, or starts an HTTP server and gives its URL, and says afterwards what went wrong;
- :mod:`.report`: the JSON-lines report through which the two sides talk.

The pytest plugin (:mod:`mcpreel.cassette.pytest_plugin`) is a thin layer over :func:`~.server.cassette_server`.
This package's ``__init__`` stays light (the plugin imports it in every pytest run).
"""

from mcpreel.cassette.mode import RecordMode

__all__ = ["RecordMode"]
