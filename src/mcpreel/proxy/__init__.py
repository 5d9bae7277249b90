"""The recording proxies: sit where a client expects its server, forward every byte, record every line.

- :mod:`mcpreel.proxy.stdio` runs a server command and pumps bytes between it and the client (the
  proxy's own stdin/stdout), recording each line both ways in a reel: :func:`record_stdio`.
- :mod:`mcpreel.proxy.recorder` turns what the pumps read into reel lines (and, optionally, a qai
  session file kept by :mod:`mcpreel.proxy.session_file`); it never changes what is forwarded.
- :mod:`mcpreel.proxy.lifecycle` is process hygiene: starting the server, forwarding signals, exit codes.
- :mod:`mcpreel.proxy.naming` gives a recording its default label and file name.
"""

from mcpreel.proxy.lifecycle import ServerStartError, exit_status
from mcpreel.proxy.naming import default_label, default_out_path
from mcpreel.proxy.stdio import RecordResult, record_stdio

__all__ = [
    "RecordResult",
    "ServerStartError",
    "default_label",
    "default_out_path",
    "exit_status",
    "record_stdio",
]
