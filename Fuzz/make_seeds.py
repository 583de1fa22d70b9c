"""Writes the seed corpus of each fuzz target (Fuzz/Corpus/<target>/). Run again after changing the seeds;
scripts/fuzz reads the corpus and never writes to it."""
import base64, json, pathlib

here = pathlib.Path(__file__).resolve().parent
repo = here.parent
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
jws = lambda header, payload: ".".join([b64(json.dumps(header).encode()), b64(json.dumps(payload).encode()), b64(b"\x01" * 40)])
cert = jws({"alg": "RS256"}, {"iss": "example.test", "exp": 1800000000000, "iat": 1790000000000,
                              "public-key": {"algorithm": "RS", "n": "123", "e": "65537"}, "principal": {"email": "a@example.test"}})
assertion = jws({"alg": "RS256"}, {"aud": "https://gatehouse.test", "exp": 1800000000000})
swt = "Issuer=https%3a%2f%2fissuer.test%2f&Audience=urn%3agatehouse%3afuzz&ExpiresOn=1800000100&name=alice&HMACSHA256=" + "A" * 43 + "%3d"
token_xml = "<wsse:BinarySecurityToken ValueType=\"http://schemas.xmlsoap.org/ws/2009/11/swt-token-profile-1.0\" EncodingType=\"base64\">" + base64.b64encode(swt.encode()).decode() + "</wsse:BinarySecurityToken>"
escaped = token_xml.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
notify = json.dumps({"appliesTo": "urn:gatehouse:fuzz", "context": "", "created": 1800000000, "expires": 1800000600,
                     "securityToken": "&lt;?xml version=&quot;1.0&quot;?&gt;" + escaped, "tokenType": "http://schemas.xmlsoap.org/ws/2009/11/swt-token-profile-1.0"})

seeds = {
    "FuzzPath": ["a/b", "a/../b/", "%2e%2e/x", "a;b/c", "..;/admin", "%C0%AE%C0%AE/x", "admin/%2561", "A%2Fb", "x//y/./z", "%E2%82%AC/~user"],
    "FuzzBrowserIDAssertion": [f"{cert}~{assertion}", json.dumps({"certificates": [cert], "assertion": assertion}),
                               "https://gatehouse.test:8443", f"{cert}~{cert}~{assertion}"],
    "FuzzACSToken": ["\x00" + swt, "\x01" + notify, "\x03" + escaped, "\x00Issuer=x&HMACSHA256=", "\x01{\"securityToken\":\"plain-token\"}"],
    "FuzzCapture": ["\x00<html><head><title>Success oauth_token=abc&amp;state=x</title></head></html>",
                    "\x00<title>Denied error=access_denied</title>", "\x01oauth_token=abc; Path=/; HttpOnly\nother=1",
                    "\x00https://legacy.test/welcome?lang=en"],
    "FuzzHTTPHeads": ["\x00GET /v1/api/x?y=1 HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer t\r\nX-Empty:\r\n\r\n",
                      "\x00POST /v1/api/x HTTP/1.1\r\nHost: gw\r\nContent-Length: 5\r\n\r\nhello",
                      "\x01HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive, x-a\r\nX-A: 1\r\n\r\nok",
                      "\x01HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n",
                      "\x02HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n", "\x01HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n",
                      "\x03" + "5;a=b\r\nhello\r\n6\r\n world\r\n0\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
                      "\x27" + "A\r\n0123456789\r\n0\r\n\r\n"],
    "FuzzConfiguration": ["\x00" + (repo / "gatehouse.example.yaml").read_text()]
                         + ["\x01" + p.read_text() for p in sorted((repo / "Providers").glob("*.yaml"))],
}
for target, inputs in seeds.items():
    folder = here / "Corpus" / target
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("seed-*"):
        old.unlink()
    for index, text in enumerate(inputs):
        (folder / f"seed-{index:02d}").write_bytes(text.encode())
