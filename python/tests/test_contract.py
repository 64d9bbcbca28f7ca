"""The package against the server's own description of itself: every model field by field
against its schema in ``/openapi.json``, every route against a method of both clients (and the
method's parameters against the route's), the event model against the export format's JSON
Schema, and the generated sync client against its async source. A server that gains a field,
a route or a parameter fails these tests until the package has it."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import httpx
import pytest
from pydantic import BaseModel

import memledger
from conftest import Server
from memledger import AsyncMemledger, Memledger, models
from memledger.routes import ROUTES, SCHEMAS

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def openapi(server: Server) -> dict[str, Any]:
    document = httpx.get(f"{server.url}/openapi.json").json()
    assert document["info"]["title"] == "memledger"
    return document


def schema_of(document: dict[str, Any], name: str) -> dict[str, Any]:
    schema: dict[str, Any] = document["components"]["schemas"][name]
    return schema


def ref_name(schema: dict[str, Any]) -> str | None:
    ref = schema.get("$ref")
    return ref.rsplit("/", 1)[1] if isinstance(ref, str) else None


def split_null(schema: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """A schema without its null alternative, and whether it had one."""
    for key in ("oneOf", "anyOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"]
            if len(options) == 1 and len(options) < len(schema[key]):
                return options[0], True
    kind = schema.get("type")
    if isinstance(kind, list) and "null" in kind:
        rest = [k for k in kind if k != "null"]
        return {**schema, "type": rest[0] if len(rest) == 1 else rest}, True
    return schema, False


def split_optional(annotation: Any) -> tuple[Any, bool]:
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) == 1 and len(args) < len(get_args(annotation)):
            return args[0], True
    return annotation, False


def check_type(document: dict[str, Any], schema: dict[str, Any], annotation: Any, where: str) -> None:
    """The model's annotation says what the schema says."""
    schema, nullable = split_null(schema)
    annotation, optional = split_optional(annotation)
    assert nullable == optional, f"{where}: nullable in the schema {nullable}, Optional in the model {optional}"
    name = ref_name(schema)
    if name is not None:
        target = schema_of(document, name)
        if "enum" in target:
            assert get_origin(annotation) is Literal, f"{where}: {name} is an enum, the model has {annotation}"
            assert set(get_args(annotation)) == set(target["enum"]), f"{where}: {name}'s values"
            return
        if name == "Document":
            assert get_origin(annotation) is dict, f"{where}: an open object is a dict in the model"
            return
        assert isinstance(annotation, type) and issubclass(annotation, BaseModel), f"{where}: {annotation}"
        assert SCHEMAS.get(name) == annotation.__name__, f"{where}: {name} is {SCHEMAS.get(name)}, not {annotation}"
        return
    if "enum" in schema:
        assert get_origin(annotation) is Literal and set(get_args(annotation)) == set(schema["enum"]), where
        return
    kind = schema.get("type")
    if kind == "array":
        assert get_origin(annotation) is list, f"{where}: an array is a list, not {annotation}"
        check_type(document, schema["items"], get_args(annotation)[0], f"{where}[]")
    elif kind == "object":
        assert get_origin(annotation) is dict, f"{where}: an object is a dict, not {annotation}"
        inner = schema.get("additionalProperties")
        if isinstance(inner, dict) and inner:
            check_type(document, inner, get_args(annotation)[1], f"{where}{{}}")
    else:
        expected = {"integer": int, "number": float, "string": str, "boolean": bool}[kind]
        assert annotation is expected, f"{where}: {kind} is {expected.__name__}, the model has {annotation}"


def test_every_document_schema_has_its_model(openapi: dict[str, Any]) -> None:
    documents = {
        name
        for name, s in openapi["components"]["schemas"].items()
        if (name.endswith("Doc") or name in ("ServerStatus", "Reply", "Refusal")) and "enum" not in s
    }
    assert documents <= set(SCHEMAS), f"schemas without a model: {sorted(documents - set(SCHEMAS))}"


@pytest.mark.parametrize("schema_name", sorted(set(SCHEMAS) - {"Document"}))
def test_each_model_is_its_schema(openapi: dict[str, Any], schema_name: str) -> None:
    schema = schema_of(openapi, schema_name)
    model: type[BaseModel] = getattr(models, SCHEMAS[schema_name])
    properties = schema.get("properties", {})
    fields = model.model_fields
    assert set(fields) == set(properties), (
        f"{schema_name}: only in the schema {sorted(set(properties) - set(fields))}, "
        f"only in {model.__name__} {sorted(set(fields) - set(properties))}"
    )
    required = set(schema.get("required", []))
    for name, field in fields.items():
        where = f"{schema_name}.{name}"
        assert field.is_required() == (name in required), f"{where}: required in the schema: {name in required}"
        check_type(openapi, properties[name], field.annotation, where)


def test_the_report_model_is_an_open_document(openapi: dict[str, Any]) -> None:
    assert schema_of(openapi, "Document").get("properties", {}) == {}
    assert models.Report.model_fields == {}


def methods(path_item: dict[str, Any]) -> list[str]:
    return [method for method in ("get", "post", "put", "patch", "delete") if method in path_item]


def test_every_route_has_a_method_and_every_method_a_route(openapi: dict[str, Any]) -> None:
    served = {(method, path) for path, item in openapi["paths"].items() for method in methods(item)}
    assert served == set(ROUTES), (
        f"routes without a method: {sorted(served - set(ROUTES))}; methods without a route: {sorted(set(ROUTES) - served)}"
    )
    for name in ROUTES.values():
        assert callable(getattr(Memledger, name)) and callable(getattr(AsyncMemledger, name)), name


#: Fields of a route's request that its method leaves to the server on purpose.
LEFT_OUT = {("post", "/v1/call"): {"color"}}


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_each_methods_parameters_cover_its_route(openapi: dict[str, Any], route: tuple[str, str]) -> None:
    method, path = route
    operation = openapi["paths"][path][method]
    wanted = {p["name"] for p in operation.get("parameters", []) if p["in"] in ("path", "query")}
    body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    if body is not None:
        name = ref_name(body)
        target = schema_of(openapi, name) if name else body
        wanted |= set(target.get("properties", {}))
    wanted -= LEFT_OUT.get(route, set())
    if route == ("post", "/v1/memories/batch"):
        # The batch's memories are save requests: each of save's fields.
        wanted |= set(schema_of(openapi, "SaveBody")["properties"]) - {"text"}
        wanted -= {"memories"}
        given = set(memledger.SaveRequest.__annotations__)
    else:
        given = set(inspect.signature(getattr(Memledger, ROUTES[route])).parameters) - {"self"}
    for client in (Memledger, AsyncMemledger):
        if route != ("post", "/v1/memories/batch"):
            given = set(inspect.signature(getattr(client, ROUTES[route])).parameters) - {"self"}
        assert wanted <= given, f"{client.__name__}.{ROUTES[route]} lacks {sorted(wanted - given)}"


def test_the_save_request_is_saves_body(openapi: dict[str, Any]) -> None:
    body = set(schema_of(openapi, "SaveBody")["properties"])
    assert set(memledger.SaveRequest.__annotations__) == body
    assert set(inspect.signature(Memledger.save).parameters) - {"self"} == body
    evidence = set(schema_of(openapi, "EvidenceBody")["properties"])
    assert set(memledger.Evidence.__annotations__) == evidence


def test_the_event_model_is_the_export_format() -> None:
    schema = json.loads((REPO / "schemas/json/event-line.schema.json").read_text())
    properties = set(schema["properties"]) | {"type", "body"}
    assert set(models.Event.model_fields) == properties
    required = set(schema["required"]) | {"type", "body"}
    for name, field in models.Event.model_fields.items():
        assert field.is_required() == (name in required), name
    event_types = {option["properties"]["type"]["const"] for option in schema["oneOf"]}
    assert "memory_observed" in event_types


def test_the_sync_client_is_generated_from_the_async_one() -> None:
    script = REPO / "python/scripts/unasync.py"
    done = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_conflict_notice_is_recalls(client: Any, scope: str) -> None:
    client.save("the api gateway times out after 30 seconds", scope=scope)
    client.save("the api gateway times out after 60 seconds", scope=scope)
    assert client.recall("api gateway timeout", scope=scope).notice == models.CONFLICT_NOTICE
