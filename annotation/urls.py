from django.urls import path

from annotation import api, views

urlpatterns = [
    path("items/", views.ItemListView.as_view(), name="item_list"),
    path("items/<str:uid>/", views.ItemDetailView.as_view(), name="item_detail"),
    path("organize/import/", views.ImportView.as_view(), name="import"),
]

api_urlpatterns = [
    path("items/", api.ItemListApi.as_view(), name="api_item_list"),
    path("items/<str:uid>/", api.ItemDetailApi.as_view(), name="api_item_detail"),
    path("imports/", api.ImportCreateApi.as_view(), name="api_import"),
    path("jobs/<uuid:job_id>/", api.JobDetailApi.as_view(), name="api_job"),
]
