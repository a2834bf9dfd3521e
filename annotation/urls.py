from django.urls import path

from annotation.api import adjudication as adjudication_api
from annotation.api import disputes as disputes_api
from annotation.api import exports as exports_api
from annotation.api import items as items_api
from annotation.api import nuggets as nuggets_api
from annotation.api import releases as releases_api
from annotation.api import review as review_api
from annotation.api import vetting as vetting_api
from annotation.views import (
    adjudication,
    disputes,
    guidelines,
    items,
    nugget_admin,
    nuggets,
    releases,
    reliability,
    review,
    review_edit,
    vetting,
)

urlpatterns = [
    path("items/", items.ItemListView.as_view(), name="item_list"),
    path("items/<str:uid>/", items.ItemDetailView.as_view(), name="item_detail"),
    path("organize/import/", items.ImportView.as_view(), name="import"),
    # vetting: reviewers
    path("review/", review.ReviewNextView.as_view(), name="review_next"),
    path("review/<int:pk>/", review.ReviewAssignmentView.as_view(), name="review_assignment"),
    path("review/<int:pk>/draft/", review_edit.ReviewDraftView.as_view(), name="review_draft"),
    path("review/mine/", review_edit.ReviewMineView.as_view(), name="review_mine"),
    path("review/mine/last/", review_edit.ReviewLastView.as_view(), name="review_last"),
    path("review/mine/<int:pk>/", review_edit.ReviewEditView.as_view(), name="review_edit"),
    path("review/<int:pk>/dispute/", review.ReviewDisputeView.as_view(), name="review_dispute"),
    path("review/<int:pk>/feedback/", review.ReviewFeedbackView.as_view(), name="review_feedback"),
    path("review/<int:pk>/give-back/", review.ReviewGiveBackView.as_view(), name="review_give_back"),
    path("disputes/", disputes.DisputeListView.as_view(), name="dispute_list"),
    path("disputes/all/", disputes.DisputeAllView.as_view(), name="dispute_all"),
    path("disputes/<int:pk>/", disputes.DisputeDetailView.as_view(), name="dispute_detail"),
    # nuggets: experts, adjudicators, organizers
    path("nuggets/", nuggets.NuggetStartView.as_view(), name="nugget_start"),
    path("nuggets/next/", nuggets.NuggetNextView.as_view(), name="nugget_next"),
    path("nuggets/task/<int:pk>/", nuggets.NuggetTaskView.as_view(), name="nugget_task"),
    path("nuggets/task/<int:pk>/release/", nuggets.NuggetTaskReleaseView.as_view(), name="nugget_task_release"),
    path("nuggets/adjudicate/", nugget_admin.NuggetAdjudicationListView.as_view(), name="nugget_adjudication_list"),
    path("nuggets/adjudicate/<str:uid>/", nugget_admin.NuggetAdjudicationView.as_view(), name="nugget_adjudication"),
    path("organize/nuggets/", nugget_admin.NuggetOverviewView.as_view(), name="nugget_overview"),
    path("organize/nuggets/export/", nugget_admin.NuggetExportView.as_view(), name="nugget_export"),
    # vetting: adjudicators
    path("adjudicate/", adjudication.AdjudicationQueueView.as_view(), name="adjudication_queue"),
    path("adjudicate/<str:uid>/", adjudication.AdjudicationItemView.as_view(), name="adjudication_item"),
    # vetting: organizers
    path("organize/vetting/", vetting.VettingDashboardView.as_view(), name="vetting_dashboard"),
    path("organize/vetting/progress/", vetting.VettingProgressPartialView.as_view(), name="vetting_progress"),
    path("organize/vetting/batches/<int:pk>/", vetting.BatchUpdateView.as_view(), name="vetting_batch"),
    path("organize/vetting/gold/", vetting.GoldMarkView.as_view(), name="vetting_gold"),
    path("organize/vetting/reliability/", reliability.ReliabilityView.as_view(), name="reliability"),
    path(
        "organize/vetting/judgements/<str:table>/<str:fmt>/",
        items.JudgementExportView.as_view(),
        name="judgement_export",
    ),
    # reviewer guidelines
    path("guidelines/", guidelines.GuidelineReadView.as_view(), name="guidelines"),
    path("organize/guidelines/", guidelines.GuidelineListView.as_view(), name="guideline_list"),
    path(
        "organize/guidelines/<str:benchmark>/<str:qa_type>/",
        guidelines.GuidelineEditView.as_view(),
        name="guideline_edit",
    ),
    path("organize/vetting/reassign/<str:uid>/", vetting.ReassignView.as_view(), name="vetting_reassign"),
    # releases
    path("releases/", releases.ReleaseListView.as_view(), name="release_list"),
    path("releases/<str:label>/", releases.ReleaseDetailView.as_view(), name="release_detail"),
    path(
        "releases/<str:label>/download/<str:fmt>/",
        releases.ReleaseDownloadView.as_view(),
        name="release_download",
    ),
]

api_urlpatterns = [
    path("items/", items_api.ItemListApi.as_view(), name="api_item_list"),
    path("items/<str:uid>/", items_api.ItemDetailApi.as_view(), name="api_item_detail"),
    path("imports/", items_api.ImportCreateApi.as_view(), name="api_import"),
    # vetting
    path("review/next/", review_api.ReviewNextApi.as_view(), name="api_review_next"),
    path("review/progress/", review_api.ReviewProgressApi.as_view(), name="api_review_progress"),
    path("review/assignments/<int:pk>/review/", review_api.ReviewSubmitApi.as_view(), name="api_review_submit"),
    path(
        "review/assignments/<int:pk>/review-then-next/",
        review_api.ReviewThenNextApi.as_view(),
        name="api_review_then_next",
    ),
    path("review/assignments/<int:pk>/dispute/", review_api.ReviewDisputeApi.as_view(), name="api_review_dispute"),
    path("review/assignments/<int:pk>/feedback/", review_api.ReviewFeedbackApi.as_view(), name="api_review_feedback"),
    path("review/assignments/<int:pk>/give-back/", review_api.ReviewGiveBackApi.as_view(), name="api_review_give_back"),
    path("disputes/", disputes_api.DisputeListApi.as_view(), name="api_dispute_list"),
    path("disputes/<int:pk>/", disputes_api.DisputeDetailApi.as_view(), name="api_dispute_detail"),
    path("disputes/<int:pk>/comments/", disputes_api.DisputeCommentApi.as_view(), name="api_dispute_comment"),
    path("disputes/<int:pk>/reject/", disputes_api.DisputeRejectApi.as_view(), name="api_dispute_reject"),
    path("adjudication/", adjudication_api.AdjudicationQueueApi.as_view(), name="api_adjudication_queue"),
    path("adjudication/<str:uid>/", adjudication_api.AdjudicationItemApi.as_view(), name="api_adjudication_item"),
    path(
        "adjudication/<str:uid>/issues/reject/",
        adjudication_api.ItemIssuesRejectApi.as_view(),
        name="api_item_issues_reject",
    ),
    path("adjudication/<str:uid>/reassign/", vetting_api.ReassignApi.as_view(), name="api_adjudication_reassign"),
    path("vetting/progress/", vetting_api.VettingProgressApi.as_view(), name="api_vetting_progress"),
    path("vetting/config/", vetting_api.VettingConfigApi.as_view(), name="api_vetting_config"),
    path("batches/<int:pk>/", vetting_api.BatchUpdateApi.as_view(), name="api_batch_update"),
    path("gold/", vetting_api.GoldListApi.as_view(), name="api_gold"),
    path("judgements/", exports_api.JudgementExportApi.as_view(), name="api_judgement_export"),
    # nuggets
    path("nuggets/next/", nuggets_api.NuggetNextApi.as_view(), name="api_nugget_next"),
    path("nuggets/tasks/<int:pk>/draft/", nuggets_api.NuggetDraftApi.as_view(), name="api_nugget_draft"),
    path("nuggets/tasks/<int:pk>/validate/", nuggets_api.NuggetValidateApi.as_view(), name="api_nugget_validate"),
    path("nuggets/tasks/<int:pk>/release/", nuggets_api.NuggetTaskReleaseApi.as_view(), name="api_nugget_release"),
    path("nuggets/disputes/", nuggets_api.NuggetDisputeListApi.as_view(), name="api_nugget_disputes"),
    path("nuggets/disputes/<str:uid>/", nuggets_api.NuggetAdjudicateApi.as_view(), name="api_nugget_adjudicate"),
    path("nuggets/import/", nuggets_api.NuggetImportApi.as_view(), name="api_nugget_import"),
    path("nuggets/export/", nuggets_api.NuggetExportApi.as_view(), name="api_nugget_export"),
    # releases
    path("releases/", releases_api.ReleaseListApi.as_view(), name="api_release_list"),
    path("releases/<str:label>/", releases_api.ReleaseDetailApi.as_view(), name="api_release_detail"),
]
