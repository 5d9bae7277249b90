"""``phoenix serve`` with its gRPC receiver on loopback.

Phoenix binds its OTLP/gRPC receiver to ``[::]`` and has no setting for the address (its HTTP server
takes ``PHOENIX_HOST``); a test must not listen on every interface, so this launcher rewrites that
one address before Phoenix starts. Run with the Phoenix virtualenv's python.
"""

import sys

import grpc.aio._server as grpc_server

_add_insecure_port = grpc_server.Server.add_insecure_port


def _loopback(self, address):
    return _add_insecure_port(self, address.replace("[::]:", "127.0.0.1:"))


grpc_server.Server.add_insecure_port = _loopback

from phoenix.server.main import main  # noqa: E402

sys.argv = ["phoenix", "serve"]
sys.exit(main())
