from django.urls import path

from annotation import api, api_review, views, views_guidelines, views_review, views_review_edit, views_vetting

urlpatterns = [
    path("items/", views.ItemListView.as_view(), name="item_list"),
    path("items/<str:uid>/", views.ItemDetailView.as_view(), name="item_detail"),
    path("organize/import/", views.ImportView.as_view(), name="import"),
    # vetting: reviewers
    path("review/", views_review.ReviewNextView.as_view(), name="review_next"),
    path("review/<int:pk>/", views_review.ReviewAssignmentView.as_view(), name="review_assignment"),
    path("review/<int:pk>/draft/", views_review_edit.ReviewDraftView.as_view(), name="review_draft"),
    path("review/mine/", views_review_edit.ReviewMineView.as_view(), name="review_mine"),
    path("review/mine/last/", views_review_edit.ReviewLastView.as_view(), name="review_last"),
    path("review/mine/<int:pk>/", views_review_edit.ReviewEditView.as_view(), name="review_edit"),
    path("review/<int:pk>/dispute/", views_review.ReviewDisputeView.as_view(), name="review_dispute"),
    path("review/<int:pk>/feedback/", views_review.ReviewFeedbackView.as_view(), name="review_feedback"),
    path("disputes/", views_review.DisputeListView.as_view(), name="dispute_list"),
    path("disputes/<int:pk>/", views_review.DisputeDetailView.as_view(), name="dispute_detail"),
    # vetting: adjudicators
    path("adjudicate/", views_review.AdjudicationQueueView.as_view(), name="adjudication_queue"),
    path("adjudicate/<str:uid>/", views_review.AdjudicationItemView.as_view(), name="adjudication_item"),
    # vetting: organizers
    path("organize/vetting/", views_vetting.VettingDashboardView.as_view(), name="vetting_dashboard"),
    path("organize/vetting/progress/", views_vetting.VettingProgressPartialView.as_view(), name="vetting_progress"),
    path("organize/vetting/batches/<int:pk>/", views_vetting.BatchUpdateView.as_view(), name="vetting_batch"),
    path("organize/vetting/gold/", views_vetting.GoldMarkView.as_view(), name="vetting_gold"),
    # reviewer guidelines
    path("guidelines/", views_guidelines.GuidelineReadView.as_view(), name="guidelines"),
    path("organize/guidelines/", views_guidelines.GuidelineListView.as_view(), name="guideline_list"),
    path(
        "organize/guidelines/<str:benchmark>/<str:qa_type>/",
        views_guidelines.GuidelineEditView.as_view(),
        name="guideline_edit",
    ),
    path("organize/vetting/reassign/<str:uid>/", views_vetting.ReassignView.as_view(), name="vetting_reassign"),
]

api_urlpatterns = [
    path("items/", api.ItemListApi.as_view(), name="api_item_list"),
    path("items/<str:uid>/", api.ItemDetailApi.as_view(), name="api_item_detail"),
    path("imports/", api.ImportCreateApi.as_view(), name="api_import"),
    # vetting
    path("review/next/", api_review.ReviewNextApi.as_view(), name="api_review_next"),
    path("review/progress/", api_review.ReviewProgressApi.as_view(), name="api_review_progress"),
    path("review/assignments/<int:pk>/review/", api_review.ReviewSubmitApi.as_view(), name="api_review_submit"),
    path("review/assignments/<int:pk>/dispute/", api_review.ReviewDisputeApi.as_view(), name="api_review_dispute"),
    path("review/assignments/<int:pk>/feedback/", api_review.ReviewFeedbackApi.as_view(), name="api_review_feedback"),
    path("disputes/", api_review.DisputeListApi.as_view(), name="api_dispute_list"),
    path("disputes/<int:pk>/", api_review.DisputeDetailApi.as_view(), name="api_dispute_detail"),
    path("disputes/<int:pk>/comments/", api_review.DisputeCommentApi.as_view(), name="api_dispute_comment"),
    path("disputes/<int:pk>/reject/", api_review.DisputeRejectApi.as_view(), name="api_dispute_reject"),
    path("adjudication/", api_review.AdjudicationQueueApi.as_view(), name="api_adjudication_queue"),
    path("adjudication/<str:uid>/", api_review.AdjudicationItemApi.as_view(), name="api_adjudication_item"),
    path(
        "adjudication/<str:uid>/issues/reject/", api_review.ItemIssuesRejectApi.as_view(), name="api_item_issues_reject"
    ),
    path("adjudication/<str:uid>/reassign/", api_review.ReassignApi.as_view(), name="api_adjudication_reassign"),
    path("vetting/progress/", api_review.VettingProgressApi.as_view(), name="api_vetting_progress"),
    path("vetting/config/", api_review.VettingConfigApi.as_view(), name="api_vetting_config"),
    path("batches/<int:pk>/", api_review.BatchUpdateApi.as_view(), name="api_batch_update"),
    path("gold/", api_review.GoldListApi.as_view(), name="api_gold"),
]
