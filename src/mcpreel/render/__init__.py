"""Reports as data, drawn by medium: the library builds a report and never prints; these modules draw it.

One module per report -- :mod:`.inspect` (a session), :mod:`.check` (a live server's checks),
:mod:`.replay` (a replay against a server), :mod:`.diff` (two recordings compared) -- each offering the
media that report has, under the same names:

- ``renderables(report, ...)`` -> rich renderables, printed one after the other on a console (a terminal;
  piped, rich drops the colours itself);
- ``plain_lines(report, ...)`` -> text lines without colour or box drawing (pipes, files);
- ``to_json(report, ...)`` -> one JSON document, newline-terminated;
- ``to_junit(report, ...)`` -> JUnit XML for CI, through the one writer, :mod:`.junit`.

The CLI (:mod:`mcpreel.cli.output`) picks the medium from ``--format``/``--json`` and the tty, and owns
the streams; tests render into a string console. An HTML page or a TUI is one more function per module.
"""
