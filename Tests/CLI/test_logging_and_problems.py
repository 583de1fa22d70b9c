"""`logging.format: json`, and the problem+json error bodies of a serving gateway."""
from __future__ import annotations

import datetime
import json
import re
import signal

import pytest

from conftest import wait_until, write_config, write_provider


def test_json_logging_writes_one_json_object_with_level_and_message_per_stderr_line(serve, tmp_path):
    config = write_config(tmp_path, 'store: {kind: "sqlite", path: "data/g.sqlite3"}\n'
                                    'logging: {level: "debug", format: "json"}\n')
    write_provider(tmp_path, "x")
    gw = serve(tmp_path, ["--config", str(config)])
    for path in ("/readyz", "/v1/providers", "/v1/session", "/v1/auth/nope/login", "/metrics", "/"):
        gw.get(path)
    bad = write_provider(tmp_path, "z", 'id: "z"\nkind: "oauth2"\n')  # an error-level log line on reload
    gw.signal(signal.SIGHUP)
    assert wait_until(lambda: str(bad) in gw.stderr.read_text(), 10), gw.stderr.read_text()
    gw.signal(signal.SIGTERM)
    assert gw.proc.wait(timeout=10) == 0

    lines = gw.stderr.read_text().splitlines()
    assert len(lines) >= 2, lines
    levels = set()
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            pytest.fail(f"stderr line is not JSON: {line!r}")
        assert isinstance(entry, dict), line
        assert isinstance(entry.get("level"), str) and isinstance(entry.get("message"), str), line
        # RFC 3339 in UTC with milliseconds, and the time of the run (not a constant, not local time).
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", entry.get("time", "")), line
        logged = datetime.datetime.strptime(entry["time"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
        assert abs((datetime.datetime.now(datetime.timezone.utc) - logged).total_seconds()) < 120, line
        levels.add(entry["level"])
    assert "error" in levels, levels
    assert gw.stdout.read_text() == ""


def problem(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"].split(";")[0].strip() == "application/problem+json"
    body = response.json()
    for member in ("type", "title", "status", "detail", "code"):
        assert member in body, f"no {member!r} in {body}"
    assert body["status"] == status
    assert body["code"] == code
    assert isinstance(body["type"], str) and isinstance(body["title"], str) and isinstance(body["detail"], str)
    assert body["detail"]
    return body


@pytest.fixture
def gateway(serve, tmp_path):
    config = write_config(tmp_path, 'store: {kind: "memory"}\n')
    write_provider(tmp_path, "x")
    return serve(tmp_path, ["--config", str(config)])


def test_get_session_without_token_is_401_problem_json_invalid_session(gateway):
    problem(gateway.get("/v1/session"), 401, "invalid_session")


def test_get_session_with_unknown_token_is_401_problem_json_invalid_session(gateway):
    problem(gateway.get("/v1/session", headers={"Authorization": "Bearer AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}),
            401, "invalid_session")


def test_login_at_unknown_provider_is_404_problem_json_unknown_provider(gateway):
    problem(gateway.get("/v1/auth/nope/login"), 404, "unknown_provider")


def test_problem_json_title_is_the_http_status_phrase(gateway):
    assert problem(gateway.get("/v1/session"), 401, "invalid_session")["title"] == "Unauthorized"
    assert problem(gateway.get("/v1/auth/nope/login"), 404, "unknown_provider")["title"] == "Not Found"
