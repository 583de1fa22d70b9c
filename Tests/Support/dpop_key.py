"""A client's DPoP key for tests (RFC 9449): ES256 proofs written here with `cryptography`, independent of the
gateway's code.

    key = DPoPKey()
    requests.get(url, headers={"Authorization": "DPoP " + token, "DPoP": key.proof("GET", url, token)})
"""
from __future__ import annotations

import base64
import hashlib
import json
import time
import uuid

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class DPoPKey:
    """A fresh P-256 key; `proof` signs a proof for one request (`ath` when a token is given, `nonce` when one is)."""

    def __init__(self):
        self.key = ec.generate_private_key(ec.SECP256R1())
        numbers = self.key.public_key().public_numbers()
        self.jwk = {"kty": "EC", "crv": "P-256", "x": b64url(numbers.x.to_bytes(32, "big")), "y": b64url(numbers.y.to_bytes(32, "big"))}

    def proof(self, method: str, url: str, token: str | None = None, nonce: str | None = None) -> str:
        header = {"typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk}
        claims = {"htm": method, "htu": url, "iat": int(time.time()), "jti": str(uuid.uuid4())}
        if token is not None:
            claims["ath"] = b64url(hashlib.sha256(token.encode()).digest())
        if nonce is not None:
            claims["nonce"] = nonce
        signing_input = b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode())
        r, s = decode_dss_signature(self.key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
        return signing_input + "." + b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))
