from django.urls import path

from analytics import api
from analytics.views import judge_card as card_views
from analytics.views import judges as judge_views
from analytics.views import nuggets as nugget_views
from analytics.views import physician_sample as sample_views
from analytics.views import promptcblue as promptcblue_views
from analytics.views import reports as views
from analytics.views import spans as span_views

urlpatterns = [
    path("analytics/", views.AnalyticsHomeView.as_view(), name="analytics_home"),
    path("analytics/reports/<int:pk>/", views.ReportDetailView.as_view(), name="report_detail"),
    path("analytics/reports/<int:pk>/print/", views.ReportPrintView.as_view(), name="report_print"),
    path("analytics/reports/<int:pk>/plots/<str:name>.<str:fmt>", views.ReportPlotView.as_view(), name="report_plot"),
    path("analytics/reports/<int:pk>/download.<str:fmt>", views.ReportDownloadView.as_view(), name="report_download"),
    # <path:>: a judge stored under an old name may hold a "/" (the import refuses one now); the plot first, so a
    # name ending in "/calibration.svg" still reaches its card through the trailing slash
    path(
        "analytics/reports/<int:pk>/judges/<path:judge>/calibration.<str:fmt>",
        card_views.JudgeCardPlotView.as_view(),
        name="judge_card_plot",
    ),
    path("analytics/reports/<int:pk>/judges/<path:judge>/", card_views.JudgeCardView.as_view(), name="judge_card"),
    path("analytics/task1/", views.Task1LeaderboardView.as_view(), name="task1_leaderboard"),
    path("analytics/task1/plots/<str:metric>.<str:fmt>", views.Task1PlotView.as_view(), name="task1_plot"),
    path(
        "analytics/promptcblue/", promptcblue_views.PromptCblueLeaderboardView.as_view(), name="promptcblue_leaderboard"
    ),
    path(
        "analytics/promptcblue/plots/<str:name>.<str:fmt>",
        promptcblue_views.PromptCbluePlotView.as_view(),
        name="promptcblue_plot",
    ),
    path(
        "analytics/promptcblue/runs/<int:pk>/", promptcblue_views.PromptCblueRunView.as_view(), name="promptcblue_run"
    ),
    path(
        "analytics/promptcblue/runs/<int:pk>/samples/<int:sample_pk>/",
        promptcblue_views.PromptCblueSampleView.as_view(),
        name="promptcblue_sample",
    ),
    path(
        "analytics/studies/<int:pk>/nuggets/", nugget_views.NuggetLeaderboardView.as_view(), name="nugget_leaderboard"
    ),
    path(
        "analytics/studies/<int:pk>/nuggets/plot.<str:fmt>", nugget_views.NuggetPlotView.as_view(), name="nugget_plot"
    ),
    path(
        "analytics/studies/<int:pk>/nuggets/items/<int:question_id>/",
        nugget_views.NuggetItemView.as_view(),
        name="nugget_item",
    ),
    path("analytics/studies/<int:pk>/nuggets/judges/", nugget_views.JudgeImportView.as_view(), name="judge_import"),
    path(
        "analytics/studies/<int:study_id>/physician-sample/",
        sample_views.StudyPhysicianSampleView.as_view(),
        name="study_physician_sample",
    ),
    path(
        "analytics/studies/<int:pk>/judges/scores/",
        judge_views.JudgeScoresImportView.as_view(),
        name="judge_scores_import",
    ),
    path("analytics/studies/<int:pk>/spans/", span_views.SpanDetectorsView.as_view(), name="span_detectors"),
    path(
        "analytics/studies/<int:pk>/spans/plot.<str:fmt>", span_views.SpanDetectorPlotView.as_view(), name="span_plot"
    ),
    path(
        "analytics/studies/<int:pk>/spans/items/<int:question_id>/",
        span_views.SpanItemView.as_view(),
        name="span_item",
    ),
]

api_urlpatterns = [
    path("reports/", api.ReportCreateApi.as_view(), name="api_report_create"),
    path("reports/<int:pk>/", api.ReportDetailApi.as_view(), name="api_report_detail"),
    path("scoring-runs/", api.ScoringRunCreateApi.as_view(), name="api_scoring_create"),
    path("scoring-runs/<int:pk>/", api.ScoringRunDetailApi.as_view(), name="api_scoring_detail"),
    path("studies/<int:pk>/nuggets/", api.NuggetReportApi.as_view(), name="api_nugget_report"),
    path("studies/<int:pk>/nuggets/matcher/", api.NuggetMatcherRunApi.as_view(), name="api_nugget_matcher"),
]
