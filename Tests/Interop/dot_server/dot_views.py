from django.http import JsonResponse
from oauth2_provider.decorators import protected_resource


# advertise_metadata=True makes DOT answer a missing/expired/revoked token with an
# RFC 6750 `401` + `WWW-Authenticate: Bearer ...` (the plain decorator answers 403).
@protected_resource(scopes=["read"], advertise_metadata=True)
def me(request):
    user = request.resource_owner
    return JsonResponse({"username": user.get_username(), "email": user.email})
