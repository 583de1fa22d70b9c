"""Helpers for the BrowserID interop tests: RSA keys for PyBrowserID and assertions with separate
certificate and assertion expiry (PyBrowserID's make_assertion uses one `exp` for both)."""
from __future__ import annotations

import random
import time

from browserid import jwt
from browserid.tests.support import get_keypair
from browserid.utils import bundle_certs_and_assertion

AUDIENCE = "https://rp.example.test"

_SMALL_PRIMES = [p for p in range(3, 2000, 2) if all(p % d for d in range(3, int(p ** 0.5) + 1, 2))]


def _is_probable_prime(n: int, rounds: int = 32) -> bool:
    if n < 2:
        return False
    for p in _SMALL_PRIMES:
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    rng = random.SystemRandom()
    for _ in range(rounds):
        x = pow(rng.randrange(2, n - 1), d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = pow(x, 2, n)
            if x == n - 1:
                break
        else:
            return False
    return True


def _prime(bits: int, e: int) -> int:
    rng = random.SystemRandom()
    while True:
        candidate = rng.getrandbits(bits) | (1 << (bits - 1)) | (1 << (bits - 2)) | 1
        if candidate % e != 1 and _is_probable_prime(candidate):
            return candidate


def rsa_keypair(bits: int, label: str):
    """(public key dict, PyBrowserID RS<label>Key with the private exponent) for a fresh `bits`-bit key.

    PyBrowserID pads its digest for a fixed modulus size per label: RS64 = 1024, RS128 = 1280,
    RS256 = 2048 bits."""
    e = 65537
    while True:
        p, q = _prime(bits // 2, e), _prime(bits - bits // 2, e)
        n = p * q
        if p != q and n.bit_length() == bits:
            break
    d = pow(e, -1, (p - 1) * (q - 1))
    public = {"algorithm": "RS", "n": str(n), "e": str(e)}
    key_class = getattr(jwt, f"{label}Key")
    return public, key_class({"n": str(n), "e": str(e), "d": str(d)})


def now_ms() -> int:
    return int(time.time() * 1000)


def backed_assertion(email: str, audience: str = AUDIENCE, issuer: str = "login.persona.org",
                     certificate_exp: int | None = None, assertion_exp: int | None = None,
                     issuer_keypair=None, email_keypair=None, certificate_claims: dict | None = None) -> str:
    """Like PyBrowserID's make_assertion, with the two expiry times set separately."""
    issuer_pub, issuer_priv = issuer_keypair or get_keypair(issuer)
    email_pub, email_priv = email_keypair or get_keypair(email)
    certificate = {
        "iss": issuer,
        "exp": certificate_exp if certificate_exp is not None else now_ms() + 60_000,
        "principal": {"email": email},
        "public-key": email_pub,
    }
    certificate.update(certificate_claims or {})
    assertion = {"exp": assertion_exp if assertion_exp is not None else now_ms() + 60_000, "aud": audience}
    return bundle_certs_and_assertion([jwt.generate(certificate, issuer_priv)], jwt.generate(assertion, email_priv))
