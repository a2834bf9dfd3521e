from django.urls import path

from annotation import api_releases, views_releases

urlpatterns = [
    path("releases/", views_releases.ReleaseListView.as_view(), name="release_list"),
    path("releases/<str:label>/", views_releases.ReleaseDetailView.as_view(), name="release_detail"),
    path(
        "releases/<str:label>/download/<str:fmt>/",
        views_releases.ReleaseDownloadView.as_view(),
        name="release_download",
    ),
]

api_urlpatterns = [
    path("releases/", api_releases.ReleaseListApi.as_view(), name="api_release_list"),
    path("releases/<str:label>/", api_releases.ReleaseDetailApi.as_view(), name="api_release_detail"),
]
