"""Django settings for the django-oauth-toolkit (DOT) interop server.

Everything that varies per run comes from environment variables (see run.py).
This is a throwaway test server: it binds 127.0.0.1 only and keeps its SQLite
database in DOT_DATA_DIR.
"""
import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA_DIR = Path(os.environ.get("DOT_DATA_DIR") or HERE / ".data")


def _flag(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in ("1", "true", "yes", "on")


SECRET_KEY = "dot-interop-test-only-not-a-secret"
DEBUG = _flag("DOT_DEBUG", False)
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]"]

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "oauth2_provider",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]

ROOT_URLCONF = "dot_urls"
WSGI_APPLICATION = None

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [HERE / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
            ],
        },
    }
]

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(DATA_DIR / "dot.sqlite3"),
        "OPTIONS": {"timeout": 20},
    }
}

# Fast hashing: this is a test server and startup/login must take milliseconds.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
AUTH_PASSWORD_VALIDATORS = []

LOGIN_URL = "/accounts/login/"
USE_TZ = True
TIME_ZONE = "UTC"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

OAUTH2_PROVIDER = {
    "PKCE_REQUIRED": True,
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_GRACE_PERIOD_SECONDS": 0,
    "ACCESS_TOKEN_EXPIRE_SECONDS": int(os.environ.get("DOT_ACCESS_TOKEN_EXPIRE_SECONDS", "6")),
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 60,
    "SCOPES": {
        "read": "Reading scope",
        "write": "Writing scope",
        "openid": "OpenID Connect",
        "profile": "Profile (name)",
        "email": "Email address",
    },
    "DEFAULT_SCOPES": ["read"],
    # RFC 9700 behaviour gates (DOT >= 3.x): insist on S256 and on the
    # Authorization header for access tokens, like a hardened deployment.
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    # RFC 9207 `iss` in the authorization response (mix-up defence). On by
    # default; DOT_AUTHZ_RESPONSE_ISS=0 turns it off.
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": _flag("DOT_AUTHZ_RESPONSE_ISS", True),
    # Tokens stay in clear text in the DB so tests can check that the gateway
    # never leaks them (DOT's hashed storage is an opt-in gate).
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": False,
    # OpenID Connect, for the `oidc` interop test (its own RS256 Application; the plain
    # OAuth 2.0 Application keeps NO_ALGORITHM and never asks for `openid`).
    # The RSA key is made fresh by run.py; OIDC_ISS_ENDPOINT is set by run.py once the
    # port is known (the exact issuer `http://127.0.0.1:<port>/o`).
    "OIDC_ENABLED": True,
    "OIDC_RSA_PRIVATE_KEY": os.environ.get("DOT_OIDC_RSA_PRIVATE_KEY", ""),
    "OIDC_ISS_ENDPOINT": "",
    "OAUTH2_VALIDATOR_CLASS": "dot_views.InteropOAuth2Validator",
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"stderr": {"class": "logging.StreamHandler"}},
    "loggers": {
        "django.server": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
        "django.request": {"handlers": ["stderr"], "level": "WARNING", "propagate": False},
        "oauth2_provider": {"handlers": ["stderr"], "level": os.environ.get("DOT_LOG_LEVEL", "INFO")},
        "oauthlib": {"handlers": ["stderr"], "level": os.environ.get("DOT_LOG_LEVEL", "INFO")},
    },
}
