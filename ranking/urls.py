from django.urls import path

from ranking import api, views

urlpatterns = [
    path("rank/", views.RankingHomeView.as_view(), name="ranking_home"),
    path("rank/studies/<int:study_id>/next/", views.RankingNextView.as_view(), name="ranking_next"),
    path("rank/studies/<int:study_id>/guidelines/", views.RankingGuidelinesView.as_view(), name="ranking_guidelines"),
    path("rank/tasks/<uuid:task_id>/", views.RankingTaskView.as_view(), name="ranking_task"),
    path("rank/tasks/<uuid:task_id>/skip/", views.RankingTaskSkipView.as_view(), name="ranking_task_skip"),
    path("rank/tasks/<uuid:task_id>/draft/", views.RankingDraftView.as_view(), name="ranking_task_draft"),
    path("organize/studies/", views.StudyListView.as_view(), name="study_list"),
    path("organize/outputs/import/", views.OutputsImportView.as_view(), name="outputs_import"),
    path("organize/studies/new/", views.StudyCreateView.as_view(), name="study_create"),
    path("organize/studies/<int:study_id>/", views.StudyDetailView.as_view(), name="study_detail"),
    path("organize/studies/<int:study_id>/state/", views.StudyStateView.as_view(), name="study_state"),
    path("organize/studies/<int:study_id>/export/<str:fmt>/", views.StudyExportView.as_view(), name="study_export"),
    path(
        "organize/studies/<int:study_id>/flags/<int:flag_id>/send/",
        views.ReferenceFlagSendView.as_view(),
        name="reference_flag_send",
    ),
]

api_urlpatterns = [
    path("ranking/studies/", api.RankerStudyListApi.as_view(), name="api_ranker_studies"),
    path("ranking/studies/<int:study_id>/next/", api.RankingNextApi.as_view(), name="api_ranking_next"),
    path("ranking/tasks/<uuid:task_id>/", api.RankingTaskDetailApi.as_view(), name="api_ranking_task"),
    path("ranking/tasks/<uuid:task_id>/submit/", api.RankingTaskSubmitApi.as_view(), name="api_ranking_submit"),
    path("systems/", api.SystemListApi.as_view(), name="api_system_list"),
    path("studies/", api.StudyListCreateApi.as_view(), name="api_study_list"),
    path("studies/<int:study_id>/", api.StudyDetailApi.as_view(), name="api_study_detail"),
    path("studies/<int:study_id>/questions/", api.StudyQuestionListApi.as_view(), name="api_study_questions"),
    path("studies/<int:study_id>/export/", api.StudyExportApi.as_view(), name="api_study_export"),
    path("studies/<int:study_id>/flags/", api.ReferenceFlagListApi.as_view(), name="api_study_flags"),
    path("studies/<int:study_id>/flags/<int:flag_id>/send/", api.ReferenceFlagSendApi.as_view(), name="api_flag_send"),
]
