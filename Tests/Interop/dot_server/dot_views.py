from django.http import JsonResponse
from oauth2_provider.decorators import protected_resource
from oauth2_provider.oauth2_validators import OAuth2Validator


class InteropOAuth2Validator(OAuth2Validator):
    """OIDC claims for the ID token and userinfo: `email` (scope email), `name` (scope profile).

    `sub` stays DOT's default, str(user.pk).
    """

    def get_additional_claims(self, request):
        return {"email": request.user.email, "name": request.user.get_full_name()}


# advertise_metadata=True makes DOT answer a missing/expired/revoked token with an
# RFC 6750 `401` + `WWW-Authenticate: Bearer ...` (the plain decorator answers 403).
@protected_resource(scopes=["read"], advertise_metadata=True)
def me(request):
    user = request.resource_owner
    return JsonResponse({"username": user.get_username(), "email": user.email})
