"""Assertions minted by Mozilla's PyBrowserID (DSA and RSA keys) against the gateway's `browserid`
provider: accepted ones start a session whose subject is the email; every refusal is a problem
document with a stable `code`, and the gateway stays healthy."""
from __future__ import annotations

import base64
import os

import pytest
import requests

from browserid.tests.support import get_keypair, make_assertion
from browserid.utils import encode_bytes

from browserid_support import AUDIENCE, backed_assertion, now_ms, rsa_keypair

PROBLEM = "application/problem+json"


def expect_session(response, email: str) -> dict:
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["token_type"] == "Bearer"
    assert body["session_token"]
    assert body["session"]["subject"] == email
    assert body["session"]["identity"]["email"] == email
    assert body["session"]["provider"] == "persona"
    assert body["session"]["credential"]["refreshable"] is False
    assert body["expires_in"] <= 900
    text = response.text
    assert "assertion" not in body["session"]
    assert "~" not in text
    return body


def expect_refusal(gateway, response, code: str, status: int = 401) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"].startswith(PROBLEM)
    problem = response.json()
    assert problem["code"] == code, problem
    assert problem["status"] == status
    assert gateway.healthy()
    return problem


# MARK: accepted


def test_dsa_assertion_from_pybrowserid_starts_a_session_and_logout_ends_it(gateway):
    # PyBrowserID's defaults: issuer login.persona.org (the trusted secondary), DS128 keys from get_keypair.
    email = "alice@gmail.test"
    body = expect_session(gateway.post_assertion(make_assertion(email, AUDIENCE)), email)
    auth = {"Authorization": f"Bearer {body['session_token']}"}
    view = requests.get(gateway.url + "/v1/session", headers=auth, timeout=10)
    assert view.status_code == 200
    assert view.json()["subject"] == email
    assert requests.delete(gateway.url + "/v1/session", headers=auth, timeout=10).status_code in (200, 204)
    assert requests.get(gateway.url + "/v1/session", headers=auth, timeout=10).status_code == 401


def test_primary_idp_certifies_its_own_domain(gateway):
    email = "bob@example.com"
    assertion = make_assertion(email, AUDIENCE, issuer="example.com", issuer_keypair=get_keypair("example.com"))
    expect_session(gateway.post_assertion(assertion), email)


def test_legacy_json_bundle_is_accepted(gateway):
    email = "carol@gmail.test"
    expect_session(gateway.post_assertion(make_assertion(email, AUDIENCE, new_style=False)), email)


def test_audience_in_body_may_be_omitted(gateway):
    email = "dave@gmail.test"
    expect_session(gateway.post_assertion(make_assertion(email, AUDIENCE), audience=""), email)


@pytest.mark.parametrize("user_label,user_bits", [("RS64", 1024), ("RS128", 1280), ("RS256", 2048), ("DS128", None)])
def test_rsa_signed_certificates_and_assertions_verify(gateway, user_label, user_bits):
    # The IdP signs the certificate with RS256 (2048-bit); the user key is RSA of each PyBrowserID size, or DSA.
    email = f"{user_label.lower()}@rsa.example"
    user = rsa_keypair(user_bits, user_label) if user_bits else get_keypair(email)
    assertion = make_assertion(email, AUDIENCE, issuer="rsa.example", issuer_keypair=gateway.rsa_idp, email_keypair=user)
    expect_session(gateway.post_assertion(assertion), email)


def test_rsa_user_key_under_dsa_issuer(gateway):
    email = "erin@gmail.test"
    assertion = make_assertion(email, AUDIENCE, email_keypair=rsa_keypair(1024, "RS64"))
    expect_session(gateway.post_assertion(assertion), email)


# MARK: refused


def test_expired_assertion(gateway):
    expired = now_ms() - 120_000
    assertion = backed_assertion("alice@gmail.test", assertion_exp=expired)
    problem = expect_refusal(gateway, gateway.post_assertion(assertion), "assertion_expired")
    assert "expired" in problem["detail"]
    # PyBrowserID's own way: one exp for both, in the past.
    expect_refusal(gateway, gateway.post_assertion(make_assertion("alice@gmail.test", AUDIENCE, exp=expired)), "assertion_expired")


def test_expired_certificate(gateway):
    assertion = backed_assertion("alice@gmail.test", certificate_exp=now_ms() - 120_000)
    expect_refusal(gateway, gateway.post_assertion(assertion), "certificate_expired")


def test_certificate_issued_in_the_future(gateway):
    assertion = backed_assertion("alice@gmail.test", certificate_claims={"iat": now_ms() + 600_000})
    expect_refusal(gateway, gateway.post_assertion(assertion), "not_yet_valid")


@pytest.mark.parametrize("audience,reason", [
    ("https://rp.example.test:8443", "port mismatch"),
    ("http://rp.example.test", "scheme mismatch"),
    ("http://rp.example.test:443", "scheme mismatch"),
    ("https://evil.example.test", "domain mismatch"),
    ("https://rp.example.test/login", "has non-empty path"),
])
def test_wrong_audience(gateway, audience, reason):
    assertion = make_assertion("alice@gmail.test", audience)
    problem = expect_refusal(gateway, gateway.post_assertion(assertion, audience=""), "audience_mismatch")
    assert problem["detail"] == f"audience mismatch: {reason}"


def test_client_named_audience_must_match_the_assertion(gateway):
    assertion = make_assertion("alice@gmail.test", AUDIENCE)
    expect_refusal(gateway, gateway.post_assertion(assertion, audience="https://rp.example.test:8443"), "audience_mismatch")


def test_issuer_not_authoritative_for_the_email_domain(gateway):
    # evil.example is a known IdP, but only for @evil.example.
    assertion = make_assertion("alice@example.com", AUDIENCE, issuer="evil.example", issuer_keypair=get_keypair("evil.example"))
    problem = expect_refusal(gateway, gateway.post_assertion(assertion), "untrusted_issuer")
    assert problem["detail"] == "untrusted issuer, expected 'example.com', got 'evil.example'"
    # The secondary may not certify a domain that has its own IdP.
    expect_refusal(gateway, gateway.post_assertion(make_assertion("alice@example.com", AUDIENCE)), "untrusted_issuer")
    # An issuer nobody pinned or trusts.
    unknown = make_assertion("alice@gmail.test", AUDIENCE, issuer="unknown.example", issuer_keypair=get_keypair("unknown.example"))
    expect_refusal(gateway, gateway.post_assertion(unknown), "untrusted_issuer")
    # But evil.example for its own users is fine.
    own = make_assertion("mallory@evil.example", AUDIENCE, issuer="evil.example", issuer_keypair=get_keypair("evil.example"))
    expect_session(gateway.post_assertion(own), "mallory@evil.example")


def test_certificate_signed_with_the_wrong_key(gateway):
    # Claims login.persona.org but is signed with another key.
    assertion = make_assertion("alice@gmail.test", AUDIENCE, issuer_keypair=get_keypair("not-persona"))
    expect_refusal(gateway, gateway.post_assertion(assertion), "invalid_signature")


@pytest.mark.parametrize("which", ["assertion_sig", "certificate_sig"])
def test_tampered_signature(gateway, which):
    assertion = make_assertion("alice@gmail.test", AUDIENCE, **{which: b"\x01" * 40})
    expect_refusal(gateway, gateway.post_assertion(assertion), "invalid_signature")


def test_tampered_payload(gateway):
    certificate, signed = make_assertion("alice@gmail.test", AUDIENCE).split("~")
    header, payload, signature = certificate.split(".")
    forged = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)).replace(b"alice@gmail.test", b"admin@gmail.test")
    tampered = ".".join([header, encode_bytes(forged), signature]) + "~" + signed
    expect_refusal(gateway, gateway.post_assertion(tampered), "invalid_signature")


def test_truncated_assertions(gateway):
    assertion = make_assertion("alice@gmail.test", AUDIENCE)
    for cut in (10, len(assertion) // 3, assertion.index("~") + 5, len(assertion) - 30):
        response = gateway.post_assertion(assertion[:cut])
        assert response.status_code == 401, (cut, response.text)
        assert response.json()["code"] in ("malformed_assertion", "invalid_signature"), (cut, response.text)
    expect_refusal(gateway, gateway.post_assertion(assertion[: assertion.index("~") + 1]), "malformed_assertion")
    assert gateway.healthy()


@pytest.mark.parametrize("garbage", ["JUNK", "J", "\x01\x02", "~", "a.b.c~d.e.f", "eyJ9.e30.AA~eyJ9.e30.AA",
                                     base64.urlsafe_b64encode(os.urandom(300)).decode().rstrip("=")])
def test_garbage(gateway, garbage):
    expect_refusal(gateway, gateway.post_assertion(garbage), "malformed_assertion")


def test_two_certificates_are_refused(gateway):
    certificate, signed = make_assertion("alice@gmail.test", AUDIENCE).split("~")
    expect_refusal(gateway, gateway.post_assertion(f"{certificate}~{certificate}~{signed}"), "unsupported_certificate_chain")


def test_oversize_assertion(gateway):
    expect_refusal(gateway, gateway.post_assertion("A" * (64 * 1024)), "assertion_too_large")


def test_missing_fields_are_a_bad_request(gateway):
    response = requests.post(gateway.assertion_url(), json={"audience": AUDIENCE}, timeout=10)
    assert response.status_code == 400
    assert response.headers["Content-Type"].startswith(PROBLEM)
    assert gateway.healthy()


def test_assertion_posted_to_another_kind_is_refused(gateway):
    response = gateway.post_assertion(make_assertion("alice@gmail.test", AUDIENCE), provider=gateway.other_provider)
    assert response.status_code in (400, 401, 404)
    assert response.headers["Content-Type"].startswith(PROBLEM)
    assert response.json()["code"] == "unsupported_operation"
    assert gateway.healthy()


def test_provider_listing_says_assertion_login(gateway):
    providers = {p["id"]: p for p in requests.get(gateway.url + "/v1/providers", timeout=10).json()["providers"]}
    persona = providers["persona"]
    assert persona["kind"] == "browserid"
    assert persona["login"] == "assertion"
    assert persona["capabilities"]["refresh"] is False
    assert persona["capabilities"]["revocation"] is False


def test_deeply_nested_json_does_not_crash_the_gateway(gateway):
    deep = encode_bytes(b"[" * 3000)
    expect_refusal(gateway, gateway.post_assertion(f"{deep}.{deep}.AAAA~{deep}.e30.AAAA"), "malformed_assertion")
    legacy = encode_bytes(b'{"certificates":' + b"[" * 9000)
    expect_refusal(gateway, gateway.post_assertion(legacy), "malformed_assertion")
