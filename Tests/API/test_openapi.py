"""The API contract: `GET /openapi.json` is a valid OpenAPI 3.1 document that lists every route, the
answers of a real sign-in conform to it, and schemathesis, generating thousands of requests from it
against the running demo, finds no server error and no answer that the document does not allow."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import requests

from demo_login import native_login
from gatehouse_testkit import require_module

HERE = Path(__file__).resolve().parent
# Every route the gateway serves to clients (the login-page proxy under /v1/pages is internal to page logins).
ROUTES = {
    ("get", "/v1/providers"), ("get", "/v1/auth/{provider}/login"), ("get", "/v1/auth/{provider}/callback"),
    ("post", "/v1/auth/{provider}/assertion"), ("post", "/v1/auth/{provider}/token"), ("get", "/v1/auth/{provider}/pages"),
    ("post", "/v1/auth/{provider}/backchannel-logout"),
    ("post", "/v1/session"), ("get", "/v1/session"), ("delete", "/v1/session"), ("post", "/v1/session/refresh"),
    *((m, "/v1/api/{path}") for m in ("get", "post", "put", "patch", "delete")),
    *((m, "/v1/proxy/{provider}/{path}") for m in ("get", "post", "put", "patch", "delete")),
    ("get", "/v1/authz"), ("get", "/.well-known/jwks.json"), ("get", "/healthz"), ("get", "/readyz"),
    ("get", "/metrics"), ("get", "/openapi.json"), ("get", "/"), ("get", "/v1/sign-in"),
    ("get", "/v1/sign-out"), ("post", "/v1/sign-out"), ("get", "/v1/sign-out/done"),
    ("post", "/v1/device/authorize"), ("post", "/v1/device/token"), ("get", "/v1/device"), ("post", "/v1/device"),
}
MAX_EXAMPLES = int(os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "150"))
MIN_REQUESTS = int(os.environ.get("SCHEMATHESIS_MIN_REQUESTS", "2000"))


@pytest.fixture(scope="module")
def document(gateway) -> dict:
    response = requests.get(gateway + "/openapi.json", timeout=10)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    return response.json()


def conforms(document: dict, schema_name: str, body) -> None:
    """Validates `body` against `#/components/schemas/<schema_name>` of the served document (JSON Schema 2020-12)."""
    jsonschema = require_module("jsonschema", "pip install -r requirements-test.txt")
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    uri = "urn:gatehouse:openapi"
    registry = Registry().with_resource(uri, Resource.from_contents(document, default_specification=DRAFT202012))
    validator = jsonschema.Draft202012Validator({"$ref": f"{uri}#/components/schemas/{schema_name}"}, registry=registry)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(body)]
    assert not errors, f"{schema_name}: {errors}"


def test_the_document_is_valid_openapi_3_1(document):
    validator = require_module("openapi_spec_validator", "pip install -r requirements-test.txt")
    validator.validate(document)
    assert document["openapi"] == "3.1.0"


def test_the_document_lists_every_route_and_this_gateways_providers(document, gateway):
    methods = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}  # a path item's other keys are not operations
    listed = {(method, path) for path, item in document["paths"].items() for method in item if method in methods}
    assert listed == ROUTES
    providers = [p["id"] for p in requests.get(gateway + "/v1/providers", timeout=10).json()["providers"]]
    assert document["components"]["parameters"]["provider"]["schema"]["enum"] == providers
    codes = document["components"]["schemas"]["Problem"]["properties"]["code"]["description"]
    for code in ("invalid_session", "reauthentication_required", "invalid_request", "unknown_provider", "upstream_unavailable"):
        assert code in codes


def test_a_real_sign_in_session_view_refresh_and_logout_conform(document, gateway):
    grant = native_login(gateway)
    conforms(document, "SessionGrant", grant)
    auth = {"Authorization": f"Bearer {grant['session_token']}"}
    view = requests.get(gateway + "/v1/session", headers=auth, timeout=10)
    assert view.status_code == 200
    conforms(document, "SessionView", view.json())
    refreshed = requests.post(gateway + "/v1/session/refresh", headers=auth, timeout=10)
    assert refreshed.status_code == 200
    conforms(document, "SessionView", refreshed.json())
    ended = requests.delete(gateway + "/v1/session", headers=auth, timeout=10)
    assert ended.status_code == 200
    conforms(document, "LogoutResult", ended.json())
    gone = requests.get(gateway + "/v1/session", headers=auth, timeout=10)
    assert gone.status_code == 401
    conforms(document, "Problem", gone.json())
    conforms(document, "ProviderList", requests.get(gateway + "/v1/providers", timeout=10).json())
    conforms(document, "Readiness", requests.get(gateway + "/readyz", timeout=10).json())
    conforms(document, "JWKSet", requests.get(gateway + "/.well-known/jwks.json", timeout=10).json())


def test_schemathesis_finds_no_server_error_and_no_answer_outside_the_document(document, gateway, tmp_path):
    require_module("schemathesis", "pip install -r requirements-test.txt")
    reports = tmp_path / "reports"
    environment = dict(os.environ, GATEHOUSE_URL=gateway, SCHEMATHESIS_HOOKS="schemathesis_hooks",
                       PYTHONPATH=os.pathsep.join([str(HERE), str(HERE.parent / "Support"), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run(
        [sys.executable, "-m", "schemathesis.cli", "--config-file", str(HERE / "schemathesis.toml"), "run", f"{gateway}/openapi.json",
         "--max-examples", str(MAX_EXAMPLES), "--workers", "1", "--report", "ndjson", "--report-dir", str(reports),
         "--no-color", "--seed", os.environ.get("SCHEMATHESIS_SEED", "20261125")],
        env=environment, capture_output=True, text=True, timeout=1200,
    )
    summary = run.stdout[-6000:]
    assert run.returncode == 0, f"schemathesis failed:\n{summary}\n{run.stderr[-3000:]}"

    # What was sent, read from the run's own report: enough requests, every operation, no 5xx.
    statuses: Counter = Counter()
    operations: Counter = Counter()
    for path in reports.glob("*.ndjson"):
        for line in path.read_text().splitlines():
            event = json.loads(line)
            recorder = event.get("ScenarioFinished", {}).get("recorder", {})
            for interaction in recorder.get("interactions", {}).values():
                response = interaction.get("response")
                statuses[response["status_code"] if response else None] += 1
                operations[recorder["label"]] += 1
    sent = sum(statuses.values())
    print(f"schemathesis: {sent} requests over {len(operations)} operations; statuses {dict(sorted(statuses.items(), key=str))}")
    assert sent >= MIN_REQUESTS, summary
    tested = {tuple(label.split(" ", 1)) for label in operations}
    # Schemathesis leaves out the document it was loaded from.
    assert tested == {(method.upper(), path) for method, path in ROUTES} - {("GET", "/openapi.json")}, sorted(operations)
    assert not [s for s in statuses if s is None or s >= 500], statuses
    assert statuses[200] > 100 and statuses[401] > 0 and statuses[400] > 0, statuses


def test_the_api_reference_page_covers_every_route_of_the_document(document):
    page = (HERE.parent.parent / "docs" / "api.md").read_text()
    for path, item in document["paths"].items():
        methods = [m.upper() for m in item if m != "parameters"]
        assert any(f"{m} {path}" in page for m in methods + ["ANY"]), f"docs/api.md does not describe {methods} {path}"
    codes = document["components"]["schemas"]["Problem"]["properties"]["code"]["description"]
    for code in codes.split(": ", 1)[1].split(";")[0].split(", "):
        assert f"`{code}`" in page, f"docs/api.md does not explain the problem code {code}"
