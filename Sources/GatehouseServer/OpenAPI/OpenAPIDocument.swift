import Foundation
import GatehouseCore
import NIOCore

/// The OpenAPI 3.1 document of the thin-client API, served at `GET /openapi.json`.
///
/// The text below is the contract (`docs/api.md` explains it in prose; the tests validate it and run
/// schemathesis against a running gateway). Two parts are filled in when it is served: the configured
/// provider ids (an `enum` on every `provider` parameter) and the gateway's own problem codes.
enum OpenAPIDocument {
    /// The document for a gateway with these providers.
    static func render(providerIDs: [String]) -> ByteBuffer {
        // Parsed on each request: it is not on a hot path, and nothing non-Sendable is kept around.
        guard var document = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else {
            return ByteBuffer(string: text)
        }
        if var components = document["components"] as? [String: Any],
            var parameters = components["parameters"] as? [String: Any],
            var provider = parameters["provider"] as? [String: Any],
            var schemas = components["schemas"] as? [String: Any],
            var problem = schemas["Problem"] as? [String: Any],
            var properties = problem["properties"] as? [String: Any],
            var code = properties["code"] as? [String: Any]
        {
            if !providerIDs.isEmpty { provider["schema"] = ["type": "string", "enum": providerIDs] }
            parameters["provider"] = provider
            components["parameters"] = parameters
            code["description"] = "Stable. The gateway's own: " + ProblemCode.gatewayCodes.map(\.rawValue).joined(separator: ", ")
                + "; a provider kind may add its own refusal codes (e.g. `assertion_expired`)."
            properties["code"] = code
            problem["properties"] = properties
            schemas["Problem"] = problem
            components["schemas"] = schemas
            document["components"] = components
        }
        guard let data = try? JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return ByteBuffer(string: text)
        }
        return ByteBuffer(bytes: data)
    }

    /// The document as written; `render` fills in the parts that depend on the configuration.
    static let text = #"""
{
  "openapi": "3.1.0",
  "info": {
    "title": "Gatehouse thin-client API",
    "version": "1.0.0",
    "summary": "One session for users of several identity providers, and the gateway in front of your backend.",
    "description": "Every error is `application/problem+json` (RFC 9457) with a stable `code` member. A session token is sent as `Authorization: Bearer <token>`, or, when the session is bound to the client's key (DPoP, RFC 9449: a `DPoP` proof sent with the sign-in makes the 201 say `\"token_type\": \"DPoP\"`), as `Authorization: DPoP <token>` with a fresh `DPoP` proof on every request; browsers use the session cookie instead, and then unsafe methods must carry `X-CSRF: 1`. The `provider` parameters list the providers this gateway has configured.",
    "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"}
  },
  "servers": [{"url": "/"}],
  "tags": [
    {"name": "providers", "description": "What this gateway can sign users in with."},
    {
      "name": "login",
      "description": "Signing in: native redirect logins (RFC 8252 + PKCE), browser logins, posted assertions and tokens."
    },
    {"name": "session", "description": "The session the client holds."},
    {
      "name": "proxy",
      "description": "Calls through the gateway: to the backend, to a provider's API, and forward authentication for another proxy."
    },
    {"name": "operations", "description": "Health, readiness, metrics, keys and this document."}
  ],
  "paths": {
    "/v1/providers": {
      "get": {
        "tags": ["providers"],
        "operationId": "listProviders",
        "summary": "The configured providers, how each signs in and what it can do.",
        "security": [],
        "responses": {
          "200": {
            "description": "The providers.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ProviderList"}}}
          }
        }
      }
    },
    "/v1/auth/{provider}/login": {
      "get": {
        "tags": ["login"],
        "operationId": "startLogin",
        "summary": "Start a login by redirect.",
        "description": "With `redirect_uri` (a native app, RFC 8252): 302 to the provider with the gateway's own state and PKCE; the client's `redirect_uri` must be allowed exactly, and its PKCE challenge must be S256. Without `redirect_uri` it is a browser login: the result is a cookie session and a redirect to `return_to` (same origin, or a listed origin). Page-login kinds (`acs`, `capture`) are sent on to `/v1/auth/{provider}/pages`.",
        "security": [],
        "parameters": [
          {"$ref": "#/components/parameters/provider"},
          {
            "name": "redirect_uri",
            "in": "query",
            "schema": {"type": "string"},
            "description": "The native client's redirect URI; an allowed one, exactly (a loopback one may vary its port)."
          },
          {
            "name": "state",
            "in": "query",
            "schema": {"type": "string"},
            "description": "The client's state, returned to it byte for byte."
          },
          {
            "name": "code_challenge",
            "in": "query",
            "schema": {"type": "string"},
            "description": "PKCE challenge (RFC 7636), required with `redirect_uri`."
          },
          {"name": "code_challenge_method", "in": "query", "schema": {"type": "string", "enum": ["S256"]}},
          {
            "name": "return_to",
            "in": "query",
            "schema": {"type": "string"},
            "description": "Browser logins: where to land afterwards (a path, or an URL on a listed origin)."
          }
        ],
        "responses": {
          "302": {"$ref": "#/components/responses/Redirect"},
          "400": {"$ref": "#/components/responses/Problem"},
          "403": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/auth/{provider}/callback": {
      "get": {
        "tags": ["login"],
        "operationId": "loginCallback",
        "summary": "Where the provider sends the user back.",
        "description": "Success: 302 to the native client's `redirect_uri` with a one-time handoff `code` and the client's `state`, or for a browser login 302 to `return_to` with the session cookie set. A provider error: 302 to the native client with `error`, `error_description`, `state`; an HTML error page for a browser. An unknown, replayed or expired state: 400 and no redirect.",
        "security": [],
        "parameters": [
          {"$ref": "#/components/parameters/provider"},
          {"name": "state", "in": "query", "schema": {"type": "string"}},
          {"name": "code", "in": "query", "schema": {"type": "string"}},
          {
            "name": "iss",
            "in": "query",
            "schema": {"type": "string"},
            "description": "RFC 9207: must equal the provider's issuer when the provider sends it."
          },
          {"name": "error", "in": "query", "schema": {"type": "string"}},
          {"name": "error_description", "in": "query", "schema": {"type": "string"}}
        ],
        "responses": {
          "302": {"$ref": "#/components/responses/Redirect"},
          "400": {"$ref": "#/components/responses/ProblemOrPage"},
          "403": {"$ref": "#/components/responses/ProblemOrPage"},
          "404": {"$ref": "#/components/responses/Problem"},
          "502": {"$ref": "#/components/responses/ProblemOrPage"},
          "503": {"$ref": "#/components/responses/ProblemOrPage"}
        }
      }
    },
    "/v1/auth/{provider}/assertion": {
      "post": {
        "tags": ["login"],
        "operationId": "signInWithAssertion",
        "summary": "Sign in with a BrowserID assertion (kind `browserid`).",
        "security": [],
        "parameters": [{"$ref": "#/components/parameters/provider"}, {"$ref": "#/components/parameters/dpop"}],
        "requestBody": {
          "required": true,
          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AssertionRequest"}}}
        },
        "responses": {
          "201": {"$ref": "#/components/responses/SessionGrant"},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "403": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "413": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/auth/{provider}/token": {
      "post": {
        "tags": ["login"],
        "operationId": "signInWithToken",
        "summary": "Sign in with a token the client captured itself (kinds `acs`, `capture`).",
        "security": [],
        "parameters": [{"$ref": "#/components/parameters/provider"}, {"$ref": "#/components/parameters/dpop"}],
        "requestBody": {
          "required": true,
          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/TokenRequest"}}}
        },
        "responses": {
          "201": {"$ref": "#/components/responses/SessionGrant"},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "403": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "413": {"$ref": "#/components/responses/Problem"},
          "502": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/auth/{provider}/pages": {
      "get": {
        "tags": ["login"],
        "operationId": "startPageLogin",
        "summary": "Start a login on the provider's own pages, shown through the gateway (kinds `acs`, `capture`).",
        "description": "303 to the provider's login page under `/v1/pages/{login}/…`, where the gateway captures the result. Same query as `/v1/auth/{provider}/login`.",
        "security": [],
        "parameters": [
          {"$ref": "#/components/parameters/provider"},
          {"name": "redirect_uri", "in": "query", "schema": {"type": "string"}},
          {"name": "state", "in": "query", "schema": {"type": "string"}},
          {"name": "code_challenge", "in": "query", "schema": {"type": "string"}},
          {"name": "code_challenge_method", "in": "query", "schema": {"type": "string", "enum": ["S256"]}},
          {"name": "return_to", "in": "query", "schema": {"type": "string"}}
        ],
        "responses": {
          "303": {"$ref": "#/components/responses/Redirect"},
          "400": {"$ref": "#/components/responses/Problem"},
          "403": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "429": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/session": {
      "post": {
        "tags": ["session"],
        "operationId": "redeemHandoffCode",
        "summary": "Exchange the one-time handoff code of a native login for a session token.",
        "description": "The code is single use, lives 60 s and is bound to the client's PKCE challenge and redirect URI. A replayed code is refused and the session made from it is revoked (RFC 6749 §4.1.2). With a `DPoP` proof the session is bound to the proof's key; a refused proof is 400 `invalid_dpop_proof` and spends the code, except 400 `use_dpop_nonce` (with `DPoP-Nonce`), after which the client retries with the nonce.",
        "security": [],
        "parameters": [{"$ref": "#/components/parameters/dpop"}],
        "requestBody": {
          "required": true,
          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/HandoffRequest"}}}
        },
        "responses": {
          "201": {"$ref": "#/components/responses/SessionGrant"},
          "400": {"$ref": "#/components/responses/Problem"},
          "413": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      },
      "get": {
        "tags": ["session"],
        "operationId": "getSession",
        "summary": "The session: who, through which provider, until when. Never the provider's tokens.",
        "responses": {
          "200": {
            "description": "The session.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SessionView"}}}
          },
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      },
      "delete": {
        "tags": ["session"],
        "operationId": "endSession",
        "summary": "Sign out: the session ends on every instance; the provider's token is revoked where the provider supports it.",
        "responses": {
          "200": {
            "description": "The session has ended.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/LogoutResult"}}}
          },
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/session/refresh": {
      "post": {
        "tags": ["session"],
        "operationId": "refreshSession",
        "summary": "Refresh the provider credential now.",
        "responses": {
          "200": {
            "description": "The session after the refresh.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SessionView"}}}
          },
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {"$ref": "#/components/responses/Problem"},
          "409": {"$ref": "#/components/responses/Problem"},
          "502": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/api/{path}": {
      "parameters": [{"$ref": "#/components/parameters/path"}],
      "description": "The backend, or the upstream of `upstreams:` whose prefix is the longest whole-segment prefix of the normalized path (its prefix removed unless `keep_prefix`; the assertion carries that upstream's audience, and its `timeout_seconds` applies). Access rules with `hosts` judge the request's `Host`.",
      "get": {
        "tags": ["proxy"],
        "operationId": "backendGet",
        "summary": "GET to the backend, as the signed-in user.",
        "description": "Forwarded to the backend after the access rules: the client's `Authorization`, the session cookie and every `X-Gatehouse-*` header it sent are removed; the gateway adds `X-Gatehouse-Provider`, `X-Gatehouse-Subject`, `X-Gatehouse-Email`, `X-Gatehouse-Groups` and the signed `X-Gatehouse-Assertion`. Paths the rules make public need no session. WebSocket upgrades are relayed after the backend's 101.",
        "security": [{"bearer": []}, {"dpop": []}, {"cookie": []}, {"providerToken": []}, {}],
        "responses": {"default": {"$ref": "#/components/responses/UpstreamOrProblem"}}
      },
      "post": {
        "tags": ["proxy"],
        "operationId": "backendPost",
        "summary": "POST to the backend, as the signed-in user.",
        "description": "Forwarded to the backend after the access rules: the client's `Authorization`, the session cookie and every `X-Gatehouse-*` header it sent are removed; the gateway adds `X-Gatehouse-Provider`, `X-Gatehouse-Subject`, `X-Gatehouse-Email`, `X-Gatehouse-Groups` and the signed `X-Gatehouse-Assertion`. Paths the rules make public need no session. WebSocket upgrades are relayed after the backend's 101.",
        "security": [{"bearer": []}, {"dpop": []}, {"cookie": []}, {"providerToken": []}, {}],
        "responses": {"default": {"$ref": "#/components/responses/UpstreamOrProblem"}},
        "requestBody": {"content": {"*/*": {"schema": {}}}}
      },
      "put": {
        "tags": ["proxy"],
        "operationId": "backendPut",
        "summary": "PUT to the backend, as the signed-in user.",
        "description": "Forwarded to the backend after the access rules: the client's `Authorization`, the session cookie and every `X-Gatehouse-*` header it sent are removed; the gateway adds `X-Gatehouse-Provider`, `X-Gatehouse-Subject`, `X-Gatehouse-Email`, `X-Gatehouse-Groups` and the signed `X-Gatehouse-Assertion`. Paths the rules make public need no session. WebSocket upgrades are relayed after the backend's 101.",
        "security": [{"bearer": []}, {"dpop": []}, {"cookie": []}, {"providerToken": []}, {}],
        "responses": {"default": {"$ref": "#/components/responses/UpstreamOrProblem"}},
        "requestBody": {"content": {"*/*": {"schema": {}}}}
      },
      "patch": {
        "tags": ["proxy"],
        "operationId": "backendPatch",
        "summary": "PATCH to the backend, as the signed-in user.",
        "description": "Forwarded to the backend after the access rules: the client's `Authorization`, the session cookie and every `X-Gatehouse-*` header it sent are removed; the gateway adds `X-Gatehouse-Provider`, `X-Gatehouse-Subject`, `X-Gatehouse-Email`, `X-Gatehouse-Groups` and the signed `X-Gatehouse-Assertion`. Paths the rules make public need no session. WebSocket upgrades are relayed after the backend's 101.",
        "security": [{"bearer": []}, {"dpop": []}, {"cookie": []}, {"providerToken": []}, {}],
        "responses": {"default": {"$ref": "#/components/responses/UpstreamOrProblem"}},
        "requestBody": {"content": {"*/*": {"schema": {}}}}
      },
      "delete": {
        "tags": ["proxy"],
        "operationId": "backendDelete",
        "summary": "DELETE to the backend, as the signed-in user.",
        "description": "Forwarded to the backend after the access rules: the client's `Authorization`, the session cookie and every `X-Gatehouse-*` header it sent are removed; the gateway adds `X-Gatehouse-Provider`, `X-Gatehouse-Subject`, `X-Gatehouse-Email`, `X-Gatehouse-Groups` and the signed `X-Gatehouse-Assertion`. Paths the rules make public need no session. WebSocket upgrades are relayed after the backend's 101.",
        "security": [{"bearer": []}, {"dpop": []}, {"cookie": []}, {"providerToken": []}, {}],
        "responses": {"default": {"$ref": "#/components/responses/UpstreamOrProblem"}}
      }
    },
    "/v1/proxy/{provider}/{path}": {
      "parameters": [{"$ref": "#/components/parameters/provider"}, {"$ref": "#/components/parameters/path"}],
      "get": {
        "tags": ["proxy"],
        "operationId": "providerAPIGet",
        "summary": "GET to the provider's own API, with the session's provider credential.",
        "description": "`{api}/{path}?query`, where `{api}` is the provider's `api.url`; the credential is attached the provider's way (Bearer; SPiD's `oauth_token`; ACS's `WRAP access_token`) and refreshed first when it is about to expire. The session must belong to this provider.",
        "responses": {"default": {"$ref": "#/components/responses/UpstreamOrProblem"}}
      },
      "post": {
        "tags": ["proxy"],
        "operationId": "providerAPIPost",
        "summary": "POST to the provider's own API, with the session's provider credential.",
        "description": "`{api}/{path}?query`, where `{api}` is the provider's `api.url`; the credential is attached the provider's way (Bearer; SPiD's `oauth_token`; ACS's `WRAP access_token`) and refreshed first when it is about to expire. The session must belong to this provider.",
        "responses": {"default": {"$ref": "#/components/responses/UpstreamOrProblem"}},
        "requestBody": {"content": {"*/*": {"schema": {}}}}
      },
      "put": {
        "tags": ["proxy"],
        "operationId": "providerAPIPut",
        "summary": "PUT to the provider's own API, with the session's provider credential.",
        "description": "`{api}/{path}?query`, where `{api}` is the provider's `api.url`; the credential is attached the provider's way (Bearer; SPiD's `oauth_token`; ACS's `WRAP access_token`) and refreshed first when it is about to expire. The session must belong to this provider.",
        "responses": {"default": {"$ref": "#/components/responses/UpstreamOrProblem"}},
        "requestBody": {"content": {"*/*": {"schema": {}}}}
      },
      "patch": {
        "tags": ["proxy"],
        "operationId": "providerAPIPatch",
        "summary": "PATCH to the provider's own API, with the session's provider credential.",
        "description": "`{api}/{path}?query`, where `{api}` is the provider's `api.url`; the credential is attached the provider's way (Bearer; SPiD's `oauth_token`; ACS's `WRAP access_token`) and refreshed first when it is about to expire. The session must belong to this provider.",
        "responses": {"default": {"$ref": "#/components/responses/UpstreamOrProblem"}},
        "requestBody": {"content": {"*/*": {"schema": {}}}}
      },
      "delete": {
        "tags": ["proxy"],
        "operationId": "providerAPIDelete",
        "summary": "DELETE to the provider's own API, with the session's provider credential.",
        "description": "`{api}/{path}?query`, where `{api}` is the provider's `api.url`; the credential is attached the provider's way (Bearer; SPiD's `oauth_token`; ACS's `WRAP access_token`) and refreshed first when it is about to expire. The session must belong to this provider.",
        "responses": {"default": {"$ref": "#/components/responses/UpstreamOrProblem"}}
      }
    },
    "/v1/authz": {
      "get": {
        "tags": ["proxy"],
        "operationId": "forwardAuth",
        "summary": "Forward authentication for a proxy the operator runs (nginx `auth_request`, Caddy `forward_auth`, Traefik `ForwardAuth`, Envoy `ext_authz`).",
        "description": "The original request is read from `X-Forwarded-Method`/`X-Forwarded-Uri` (Caddy, Traefik), `X-Original-Method`/`X-Original-URI` or `X-Original-URL` (nginx), or from the path after `/v1/authz` (Envoy); both families present and disagreeing is 400. The access rules judge the original path after normalization. Any method is accepted (the proxy's own). Allowed: 200 with an empty body and the identity headers for the proxy to copy upstream.",
        "security": [{}, {"bearer": []}, {"dpop": []}, {"cookie": []}, {"providerToken": []}],
        "parameters": [
          {"name": "X-Forwarded-Method", "in": "header", "schema": {"type": "string"}},
          {"name": "X-Forwarded-Uri", "in": "header", "schema": {"type": "string"}},
          {"name": "X-Original-Method", "in": "header", "schema": {"type": "string"}},
          {"name": "X-Original-URI", "in": "header", "schema": {"type": "string"}}
        ],
        "responses": {
          "200": {
            "description": "Let the request through. The identity headers are set when there is a session (empty otherwise, for proxies that copy them unconditionally).",
            "headers": {
              "X-Gatehouse-Provider": {"schema": {"type": "string"}},
              "X-Gatehouse-Subject": {"schema": {"type": "string"}},
              "X-Gatehouse-Email": {"schema": {"type": "string"}},
              "X-Gatehouse-Groups": {"schema": {"type": "string"}},
              "X-Gatehouse-Assertion": {"schema": {"type": "string"}}
            }
          },
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {
            "description": "No session: `invalid_session` or `reauthentication_required`, or a provider-issued bearer token that is refused (`invalid_token`). `X-Gatehouse-Sign-In` is the sign-in page that returns to the original request, for the proxy to redirect a browser to.",
            "headers": {
              "WWW-Authenticate": {"required": true, "schema": {"type": "string"}},
              "X-Gatehouse-Sign-In": {"required": true, "schema": {"type": "string"}}
            },
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
          },
          "403": {"$ref": "#/components/responses/Problem"},
          "502": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/.well-known/jwks.json": {
      "get": {
        "tags": ["operations"],
        "operationId": "assertionKeys",
        "summary": "The public keys that verify `X-Gatehouse-Assertion` (RFC 7517).",
        "security": [],
        "responses": {
          "200": {
            "description": "The key set.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/JWKSet"}}}
          }
        }
      }
    },
    "/healthz": {
      "get": {
        "tags": ["operations"],
        "operationId": "health",
        "summary": "Liveness: the process answers.",
        "security": [],
        "responses": {
          "200": {
            "description": "Alive.",
            "content": {
              "application/json": {
                "schema": {"type": "object", "required": ["status"], "properties": {"status": {"const": "ok"}}}
              }
            }
          }
        }
      }
    },
    "/readyz": {
      "get": {
        "tags": ["operations"],
        "operationId": "readiness",
        "summary": "Readiness: the store answers and at least one provider is loaded.",
        "description": "`degraded` when a provider's own identity provider cannot be reached (its logins fail, the others work).",
        "security": [],
        "responses": {
          "200": {
            "description": "Ready or degraded.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Readiness"}}}
          },
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/metrics": {
      "get": {
        "tags": ["operations"],
        "operationId": "metrics",
        "summary": "Prometheus text exposition.",
        "security": [],
        "responses": {"200": {"description": "The metrics.", "content": {"text/plain": {"schema": {"type": "string"}}}}}
      }
    },
    "/openapi.json": {
      "get": {
        "tags": ["operations"],
        "operationId": "openAPIDocument",
        "summary": "This document.",
        "security": [],
        "responses": {
          "200": {
            "description": "The OpenAPI 3.1 document.",
            "content": {"application/json": {"schema": {"type": "object", "required": ["openapi", "paths"]}}}
          }
        }
      }
    },
    "/": {
      "get": {
        "tags": ["operations"],
        "operationId": "homePage",
        "summary": "A small page: the providers with sign-in links, and the signed-in session.",
        "security": [{}, {"cookie": []}],
        "responses": {"200": {"$ref": "#/components/responses/Page"}},
        "parameters": [
          {
            "name": "return_to",
            "in": "query",
            "schema": {"type": "string"},
            "description": "Where the sign-in links return to (a path, or an URL on `access.return_to_origins`; anything else is `/`)."
          }
        ]
      }
    },
    "/v1/sign-in": {
      "get": {
        "tags": ["login"],
        "operationId": "signInPage",
        "summary": "The sign-in page (the home page under /v1/, where a proxy in front of an application routes the gateway's paths).",
        "description": "Every sign-in link carries `return_to`. `/v1/authz` names this page, with the original request as `return_to`, in the `X-Gatehouse-Sign-In` header of its 401.",
        "security": [{}, {"cookie": []}],
        "parameters": [
          {
            "name": "return_to",
            "in": "query",
            "schema": {"type": "string"},
            "description": "Where the sign-in links return to (a path, or an URL on `access.return_to_origins`; anything else is `/`)."
          }
        ],
        "responses": {"200": {"$ref": "#/components/responses/Page"}}
      }
    },
    "/v1/sign-out": {
      "get": {
        "tags": ["session"],
        "operationId": "signOutPage",
        "summary": "A page with one button: a form that posts `return_to` to `POST /v1/sign-out`. It changes nothing itself.",
        "description": "An application behind forward authentication links to `/v1/sign-out?return_to=/` on its own host.",
        "security": [{}, {"cookie": []}],
        "parameters": [
          {
            "name": "return_to",
            "in": "query",
            "schema": {"type": "string"},
            "description": "Where to go once signed out (default `/`): a path on this gateway, or a URL on an origin `access.return_to_origins` lists; anything else is 400."
          }
        ],
        "responses": {
          "200": {"$ref": "#/components/responses/Page"},
          "400": {"$ref": "#/components/responses/Problem"}
        }
      },
      "post": {
        "tags": ["session"],
        "operationId": "signOut",
        "summary": "Sign out from a page: ends the cookie's session as `DELETE /v1/session` does, clears the cookie, and 303s to the provider's browser logout, or to `return_to` when the provider has none.",
        "description": "No `X-CSRF`: the request must carry an `Origin` of the gateway's own origin or of `access.return_to_origins`, or, without `Origin`, `Sec-Fetch-Site: same-origin`; anything else is 403 `csrf_required` and changes nothing. The provider's logout (OIDC `end_session_endpoint` with `id_token_hint`, `client_id`, `post_logout_redirect_uri={public_url}/v1/sign-out/done` and `state`; SPiD's browser logout likewise) comes back to `GET /v1/sign-out/done`. Without a session it only redirects. A session bound to a key (DPoP) is not ended through the cookie: 401 `invalid_token`.",
        "security": [{}, {"cookie": []}],
        "requestBody": {
          "required": false,
          "content": {
            "application/x-www-form-urlencoded": {
              "schema": {
                "type": "object",
                "properties": {
                  "return_to": {"type": "string", "description": "Where to go once signed out (default `/`), by the rules of `GET /v1/sign-out`."}
                }
              }
            }
          }
        },
        "responses": {
          "303": {
            "description": "Signed out (or there was no session): to the provider's browser logout, or to `return_to`. The session cookie is cleared (`Max-Age=0`) when a session ended.",
            "headers": {
              "Location": {"$ref": "#/components/headers/Location"},
              "Set-Cookie": {"description": "The session cookie, cleared.", "schema": {"type": "string"}}
            }
          },
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {"$ref": "#/components/responses/Problem"},
          "413": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/sign-out/done": {
      "get": {
        "tags": ["session"],
        "operationId": "signOutDone",
        "summary": "Where the provider's browser logout returns (`post_logout_redirect_uri`): 303 to the `return_to` its `state` carries.",
        "description": "Register `{public_url}/v1/sign-out/done` at the provider as a post-logout redirect URI. The `state` is sealed by the gateway and short-lived; a missing, altered or expired one is 400 and no redirect.",
        "security": [{}],
        "parameters": [
          {"name": "state", "in": "query", "required": true, "schema": {"type": "string"}, "description": "The `state` the sign-out sent to the provider."}
        ],
        "responses": {
          "303": {"$ref": "#/components/responses/Redirect"},
          "400": {"$ref": "#/components/responses/Problem"}
        }
      }
    }
  },
  "security": [{"bearer": []}, {"dpop": []}, {"cookie": []}],
  "components": {
    "securitySchemes": {
      "bearer": {"type": "http", "scheme": "bearer", "description": "The session token from a 201 sign-in answer."},
      "dpop": {
        "type": "http",
        "scheme": "dpop",
        "description": "A session bound to the client's key (RFC 9449): `Authorization: DPoP <token>` and a `DPoP` proof of this request (`htm`, `htu` under the gateway's public URL, `iat`, a new `jti`, `ath` of the token, the `nonce` when the gateway requires nonces). A refused proof is 401 `invalid_dpop_proof` or `use_dpop_nonce` (with `DPoP-Nonce`); a bound token sent as Bearer is 401 `invalid_token`."
      },
      "providerToken": {
        "type": "http",
        "scheme": "bearer",
        "description": "Only on `/v1/api/**` and `/v1/authz`: an access token issued by an identity provider whose file has `bearer_tokens.accept` (machine clients; docs/machine-clients.md), as `Authorization: Bearer`. A JWT is verified with the provider's JWKS, an opaque token introspected (RFC 7662). Refused: 401 `invalid_token` with `WWW-Authenticate: Bearer error=\"invalid_token\"`; the provider unreachable: 503 `provider_unavailable`. Elsewhere such a token is 401 `invalid_session`."
      },
      "cookie": {
        "type": "apiKey",
        "in": "cookie",
        "name": "__Host-gatehouse_session",
        "description": "Browser sessions (the name is the `sessions.cookie.name` setting). Unsafe methods need `X-CSRF: 1` as well."
      }
    },
    "parameters": {
      "dpop": {
        "name": "DPoP",
        "in": "header",
        "required": false,
        "description": "A DPoP proof (RFC 9449) with `htm` POST and `htu` this endpoint's URL: the session is bound to its key and the 201 says `\"token_type\": \"DPoP\"`.",
        "schema": {"type": "string"}
      },
      "provider": {
        "name": "provider",
        "in": "path",
        "required": true,
        "description": "A configured provider's id.",
        "schema": {"type": "string"}
      },
      "path": {
        "name": "path",
        "in": "path",
        "required": true,
        "description": "The rest of the path (any number of segments), with the query, passed on after normalization.",
        "schema": {"type": "string"}
      }
    },
    "headers": {
      "Location": {"required": true, "schema": {"type": "string"}},
      "RetryAfter": {
        "description": "Seconds to wait before trying again (with 429 and 503).",
        "schema": {"type": "integer", "minimum": 0}
      }
    },
    "responses": {
      "Problem": {
        "description": "An RFC 9457 problem with a stable `code`.",
        "headers": {"Retry-After": {"$ref": "#/components/headers/RetryAfter"}},
        "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
      },
      "Unauthorized": {
        "description": "No session, or one that has ended (`invalid_session`, `reauthentication_required`); for a session bound to a key, a proof that is refused (`invalid_dpop_proof`, `use_dpop_nonce`) or the token sent with the wrong scheme (`invalid_token`); on `/v1/api/**` and `/v1/authz`, a provider-issued bearer token the gateway does not accept (`invalid_token`).",
        "headers": {
          "WWW-Authenticate": {"required": true, "schema": {"type": "string"}},
          "DPoP-Nonce": {"description": "The nonce the next DPoP proof must carry (with `use_dpop_nonce`).", "schema": {"type": "string"}}
        },
        "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
      },
      "ProblemOrPage": {
        "description": "A problem for a native client; an HTML error page (with `<meta name=\"gatehouse-error\" content=\"<code>\">`) for a browser.",
        "content": {
          "application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}},
          "text/html": {"schema": {"type": "string"}}
        }
      },
      "Redirect": {"description": "A redirect.", "headers": {"Location": {"$ref": "#/components/headers/Location"}}},
      "Page": {"description": "An HTML page.", "content": {"text/html": {"schema": {"type": "string"}}}},
      "SessionGrant": {
        "description": "Signed in.",
        "headers": {
          "DPoP-Nonce": {"description": "With `sessions.dpop.require_nonce`: the nonce for the client's next DPoP proof.", "schema": {"type": "string"}}
        },
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SessionGrant"}}}
      },
      "UpstreamOrProblem": {
        "description": "The upstream's answer, relayed (hop-by-hop headers removed), whatever its status; or the gateway's own refusal or error as a problem: 401 no session (`invalid_session`, `reauthentication_required`), 403 (`access_denied`, `csrf_required`, `provider_mismatch`), 400 `invalid_path`, 413, 502 `upstream_unavailable`/`bad_gateway`, 503 `store_unavailable`, 504 `upstream_timeout`. A provider API's own errors are translated into problems (`provider_token_rejected`, `provider_insufficient_scope`, `provider_error`).",
        "content": {
          "application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}},
          "*/*": {"schema": {}}
        }
      }
    },
    "schemas": {
      "Problem": {
        "type": "object",
        "required": ["type", "title", "status", "detail", "code"],
        "properties": {
          "type": {"type": "string"},
          "title": {"type": "string"},
          "status": {"type": "integer", "minimum": 400, "maximum": 599},
          "detail": {"type": "string"},
          "code": {
            "type": "string",
            "pattern": "^[a-z][a-z0-9_]*$",
            "description": "Stable; see the API reference for the list."
          },
          "retry_after": {"type": "integer", "minimum": 0},
          "request_id": {"type": "string"}
        }
      },
      "ProviderList": {
        "type": "object",
        "required": ["providers"],
        "properties": {"providers": {"type": "array", "items": {"$ref": "#/components/schemas/Provider"}}}
      },
      "Provider": {
        "type": "object",
        "required": ["id", "kind", "name", "login", "capabilities"],
        "properties": {
          "id": {"type": "string"},
          "kind": {"type": "string"},
          "name": {"type": "string"},
          "login": {"type": "string", "enum": ["redirect", "assertion", "token"]},
          "capabilities": {
            "type": "object",
            "required": ["refresh", "revocation", "expiry_known", "userinfo", "legacy_capture"],
            "properties": {
              "refresh": {"type": "boolean"},
              "revocation": {"type": "boolean"},
              "expiry_known": {"type": "boolean"},
              "userinfo": {"type": "boolean"},
              "legacy_capture": {"type": "boolean"}
            }
          }
        }
      },
      "HandoffRequest": {
        "type": "object",
        "required": ["grant_type", "code", "code_verifier", "redirect_uri"],
        "properties": {
          "grant_type": {"const": "authorization_code"},
          "code": {"type": "string"},
          "code_verifier": {"type": "string"},
          "redirect_uri": {"type": "string"}
        }
      },
      "AssertionRequest": {
        "type": "object",
        "required": ["assertion", "audience"],
        "properties": {"assertion": {"type": "string"}, "audience": {"type": "string"}}
      },
      "TokenRequest": {"type": "object", "required": ["token"], "properties": {"token": {"type": "string"}}},
      "SessionGrant": {
        "type": "object",
        "required": ["session_token", "token_type", "expires_in", "session"],
        "properties": {
          "session_token": {"type": "string", "description": "Opaque; 32 random bytes, base64url."},
          "token_type": {"type": "string", "enum": ["Bearer", "DPoP"]},
          "expires_in": {"type": "integer", "minimum": 0},
          "session": {"$ref": "#/components/schemas/SessionView"}
        }
      },
      "SessionView": {
        "type": "object",
        "required": [
          "id",
          "provider",
          "subject",
          "identity",
          "scope",
          "created_at",
          "last_seen_at",
          "expires_at",
          "credential"
        ],
        "properties": {
          "id": {"type": "string"},
          "provider": {"type": "string"},
          "subject": {"type": "string"},
          "identity": {
            "type": "object",
            "required": ["subject", "groups"],
            "properties": {
              "subject": {"type": "string"},
              "email": {"type": "string"},
              "name": {"type": "string"},
              "groups": {"type": "array", "items": {"type": "string"}}
            }
          },
          "scope": {"type": "array", "items": {"type": "string"}},
          "created_at": {"type": "string", "format": "date-time"},
          "last_seen_at": {"type": "string", "format": "date-time"},
          "expires_at": {"type": "string", "format": "date-time"},
          "credential": {
            "type": "object",
            "required": ["refreshable"],
            "properties": {
              "refreshable": {"type": "boolean"},
              "expires_at": {"type": "string", "format": "date-time"},
              "clock_skew_seconds": {
                "type": "integer",
                "description": "Provider clock minus gateway clock, where the provider tells its time."
              }
            }
          }
        }
      },
      "LogoutResult": {
        "type": "object",
        "required": ["provider_logout"],
        "properties": {
          "provider_logout": {"type": "string", "enum": ["revoked", "failed", "not_supported"]},
          "browser_logout_url": {
            "type": "string",
            "description": "Cookie sessions: where to end the provider's own browser session."
          }
        }
      },
      "Readiness": {
        "type": "object",
        "required": ["status", "providers", "not_ready"],
        "properties": {
          "status": {"type": "string", "enum": ["ready", "degraded"]},
          "providers": {"type": "integer", "minimum": 1},
          "not_ready": {"type": "array", "items": {"type": "string"}}
        }
      },
      "JWKSet": {
        "type": "object",
        "required": ["keys"],
        "properties": {
          "keys": {
            "type": "array",
            "items": {
              "type": "object",
              "required": ["kty", "kid"],
              "properties": {
                "kty": {"type": "string"},
                "kid": {"type": "string"},
                "alg": {"type": "string"},
                "use": {"type": "string"}
              }
            }
          }
        }
      }
    }
  }
}
"""#
}
