from django.contrib.auth import views as auth_views
from django.urls import include, path

import dot_views

urlpatterns = [
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
    path("api/me", dot_views.me, name="api-me"),
]
