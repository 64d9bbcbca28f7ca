"""An OTLP/HTTP trace receiver for the tests: it decodes each request's protobuf payload with
the OpenTelemetry project's own generated messages (PyPI ``opentelemetry-proto``) and prints
every span it received as one JSON line on standard output.

Usage: receiver.py  — prints ``listening PORT`` first (an ephemeral port on 127.0.0.1), then one
line per span: ``trace_id``, ``span_id``, ``parent_span_id`` (hex, empty for a root),
``name``, ``kind``, ``start_ns``, ``end_ns``, ``service`` (the resource's ``service.name``),
``scope`` (the instrumentation scope) and ``attributes`` (their values as JSON values).
A payload that does not decode is answered 400 and printed as ``{"error": ...}``.
"""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


def value_of(v: AnyValue) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [value_of(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: value_of(kv.value) for kv in v.kvlist_value.values}
    if kind == "bytes_value":
        return v.bytes_value.hex()
    return getattr(v, kind) if kind else None


def emit(line: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path != "/v1/traces":
            self.send_response(404)
            self.end_headers()
            return
        request = ExportTraceServiceRequest()
        try:
            request.ParseFromString(body)
        except DecodeError as e:
            emit({"error": f"not an ExportTraceServiceRequest: {e}", "content_type": self.headers.get("Content-Type")})
            self.send_response(400)
            self.end_headers()
            return
        for resource_spans in request.resource_spans:
            resource = {kv.key: value_of(kv.value) for kv in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    emit(
                        {
                            "trace_id": span.trace_id.hex(),
                            "span_id": span.span_id.hex(),
                            "parent_span_id": span.parent_span_id.hex(),
                            "name": span.name,
                            "kind": span.kind,
                            "start_ns": span.start_time_unix_nano,
                            "end_ns": span.end_time_unix_nano,
                            "service": resource.get("service.name"),
                            "scope": scope_spans.scope.name,
                            "attributes": {kv.key: value_of(kv.value) for kv in span.attributes},
                            "content_type": self.headers.get("Content-Type"),
                        }
                    )
        answer = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    emit({"listening": server.server_address[1]})
    server.serve_forever()


if __name__ == "__main__":
    main()
