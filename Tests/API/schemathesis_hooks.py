"""Schemathesis hooks (`SCHEMATHESIS_HOOKS=schemathesis_hooks`): every generated request that does not set
`Authorization` itself carries a session of the demo's OAuth 2.0 provider, minted anew every second, so a
generated `DELETE /v1/session` does not leave the rest of the run without one."""
from __future__ import annotations

import os

import schemathesis

from demo_login import native_login

GATEWAY = os.environ["GATEHOUSE_URL"]


@schemathesis.auth(refresh_interval=1)
class DemoSession:
    def get(self, case, context):
        return native_login(GATEWAY)["session_token"]

    def set(self, case, data, context):
        case.headers = case.headers or {}
        case.headers.setdefault("Authorization", f"Bearer {data}")
