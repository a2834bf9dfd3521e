from django.urls import path

from annotation.api import releases as releases_api
from annotation.views import releases

urlpatterns = [
    path("releases/", releases.ReleaseListView.as_view(), name="release_list"),
    path("releases/<str:label>/", releases.ReleaseDetailView.as_view(), name="release_detail"),
    path(
        "releases/<str:label>/download/<str:fmt>/",
        releases.ReleaseDownloadView.as_view(),
        name="release_download",
    ),
]

api_urlpatterns = [
    path("releases/", releases_api.ReleaseListApi.as_view(), name="api_release_list"),
    path("releases/<str:label>/", releases_api.ReleaseDetailApi.as_view(), name="api_release_detail"),
]
