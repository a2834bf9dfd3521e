from allauth.account.decorators import secure_admin_login
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from analytics.urls import api_urlpatterns as analytics_api
from annotation.urls import api_urlpatterns as annotation_api
from home.views import HomeView
from portal import api as portal_api
from portal import views
from portal.permissions import AUTHENTICATED
from ranking.urls import api_urlpatterns as ranking_api

# The admin has no login form of its own: /admin/login/ sends people to the portal's login (allauth: MFA,
# throttling, admission) and comes back with ``next``; a signed-in person who is not staff is refused.
admin.site.login = secure_admin_login(admin.site.login)


class SchemaView(SpectacularAPIView):
    required_roles = AUTHENTICATED


class DocsView(SpectacularSwaggerSplitView):
    """The split view serves Swagger UI's init script from a URL (``?script=``), so the CSP needs no inline script."""

    required_roles = AUTHENTICATED
    template_name = "portal/swagger_ui.html"


urlpatterns = [
    path("", HomeView.as_view(), name="home"),
    path("health/", views.health, name="health"),
    path("organize/people/", views.PeopleView.as_view(), name="people"),
    path("organize/people/<int:pk>/", views.PersonEditView.as_view(), name="person_edit"),
    path("organize/audit/", views.AuditTrailView.as_view(), name="audit_trail"),
    path("tokens/", views.ApiTokensView.as_view(), name="api_tokens"),
    path("jobs/", views.JobListView.as_view(), name="job_list"),
    path("jobs/<uuid:job_id>/", views.JobView.as_view(), name="job"),
    path("jobs/<uuid:job_id>/retry/", views.JobRetryView.as_view(), name="job_retry"),
    # The API before the pages: Django tries the patterns in order, and the review loop's two API calls are the
    # portal's most frequent requests (no page path starts with "api/", so the order decides nothing else).
    path("api/jobs/<uuid:job_id>/", portal_api.JobDetailApi.as_view(), name="api_job"),
    path("api/jobs/<uuid:job_id>/retry/", portal_api.JobRetryApi.as_view(), name="api_job_retry"),
    path("api/", include(annotation_api)),
    path("api/", include(ranking_api)),
    path("api/", include(analytics_api)),
    path("", include("annotation.urls")),
    path("", include("ranking.urls")),
    path("", include("analytics.urls")),
    path("api/schema/", SchemaView.as_view(), name="schema"),
    path("api/docs/", DocsView.as_view(url_name="schema"), name="api_docs"),
    # Under accounts/, with the other sign-in pages: an organizer who has yet to enrol TOTP may use it too.
    path("accounts/sign-out-everywhere/", views.SignOutEverywhereView.as_view(), name="account_sign_out_everywhere"),
    path("accounts/", include("allauth.urls")),
    path("admin/", admin.site.urls),
]
