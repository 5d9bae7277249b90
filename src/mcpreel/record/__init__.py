"""The recording proxies: sit where a client expects its server, forward every byte, record every line.

- :mod:`mcpreel.record.stdio_proxy` runs a server command and pumps bytes between it and the client (the
  proxy's own stdin/stdout), recording each line both ways in a reel: :func:`record_stdio`.
- :mod:`mcpreel.record.stdio_recorder` turns what the pumps read into reel lines (and, optionally, a qai
  session file kept by :mod:`mcpreel.record.session_file`); it never changes what is forwarded.
- Process hygiene (starting the server, forwarding signals, exit codes) is :mod:`mcpreel.clients.process`,
  shared with every other place mcpreel starts a server.
- :mod:`mcpreel.record.naming` gives a recording its default label and file name.
"""

from mcpreel.clients.process import ServerStartError, exit_status
from mcpreel.record.naming import default_label, default_out_path
from mcpreel.record.stdio_proxy import RecordResult, record_stdio

__all__ = [
    "RecordResult",
    "ServerStartError",
    "default_label",
    "default_out_path",
    "exit_status",
    "record_stdio",
]
