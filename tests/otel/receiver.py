"""A minimal real OTLP/HTTP trace receiver for tests: ``POST /v1/traces`` with protobuf (gzip or not),
decoded by ``opentelemetry-proto``'s own ``ExportTraceServiceRequest``, answered as the spec says."""

from __future__ import annotations

import gzip
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [_value(x) for x in v.array_value.values]
    return getattr(v, kind) if kind else None


def attrs(items: Any) -> dict[str, Any]:
    return {a.key: _value(a.value) for a in items}


class Receiver:
    """Collects every request; ``spans()`` flattens them to dicts with hex ids and plain attributes."""

    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        self.headers: list[dict[str, str]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path != "/v1/traces" or self.headers.get("Content-Type") != "application/x-protobuf":
                    self.send_response(404 if self.path != "/v1/traces" else 415)
                    self.end_headers()
                    return
                req = ExportTraceServiceRequest()
                req.ParseFromString(body)
                outer.requests.append(req)
                outer.headers.append({k.lower(): v for k, v in self.headers.items()})
                payload = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)

    def spans(self) -> list[dict[str, Any]]:
        out = []
        for req in self.requests:
            for rs in req.resource_spans:
                resource = attrs(rs.resource.attributes)
                for ss in rs.scope_spans:
                    for s in ss.spans:
                        out.append({
                            "name": s.name, "kind": s.kind, "trace_id": s.trace_id.hex(), "span_id": s.span_id.hex(),
                            "parent_id": s.parent_span_id.hex() or None, "start": s.start_time_unix_nano,
                            "end": s.end_time_unix_nano, "attributes": attrs(s.attributes), "resource": resource,
                            "events": [(e.name, e.time_unix_nano, attrs(e.attributes)) for e in s.events],
                            "links": [(link.trace_id.hex(), link.span_id.hex()) for link in s.links],
                            "status": (s.status.code, s.status.message), "scope": ss.scope.name,
                        })
        return out
