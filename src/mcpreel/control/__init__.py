"""The control channel of a recording proxy (issue 14): watch a session live, hold, edit, drop, inject.

- :mod:`~mcpreel.control.protocol`: the wire (newline-delimited JSON objects), message shapes, validation
  of an edited JSON-RPC message;
- :mod:`~mcpreel.control.discovery`: the private runtime directory, listing running proxies;
- :mod:`~mcpreel.control.filters`: the filter tokens (``method:tools/call dir:c2s``...);
- :mod:`~mcpreel.control.client`: the client a viewer uses;
- :mod:`~mcpreel.control.server`: the socket server a recording proxy runs (an addon of the recording
  pipeline and an interceptor of :mod:`mcpreel.record.intercept`).
"""
