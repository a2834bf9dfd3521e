"""The organizer's page drawing a study's physician sample: physicians rank a designed share of the questions and the
report's estimates weight each by 1/its chance (:mod:`analytics.services.physician_sample`). On the analytics side
because the designs that follow a judge read its imported scores; the study page (ranking) states the design and
links here while no physician has a task."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views import View

from analytics.forms import PhysicianSampleForm
from analytics.judges.ppi import last_judge_power
from analytics.presentation.ppi import last_judge_sentence
from analytics.services.physician_sample import physician_sample_draw, study_judges
from portal.errors import DomainError
from portal.permissions import RoleRequiredMixin
from portal.roles import Role
from ranking.models import RankingTask, Study
from ranking.sample_design import design_sentence

TEMPLATE = "analytics/physician_sample.html"


def _context(study: Study, form: PhysicianSampleForm | None = None) -> dict:
    is_open = not RankingTask.objects.filter(study=study).exists()
    context = {
        "study": study,
        "design": design_sentence(study.physician_sample) if study.physician_sample else "",
        "open": is_open,
    }
    if is_open:
        context["form"] = form or PhysicianSampleForm(judges=study_judges(study))
        context["power"] = last_judge_sentence(last_judge_power(study.questions.count()))
    return context


class StudyPhysicianSampleView(RoleRequiredMixin, View):
    """GET: the design drawn so far, the form and the "a judge like the last one would need…" figure; POST: draw
    (:func:`physician_sample_draw`), refused with the reason on the page."""

    required_roles = (Role.ORGANIZER,)

    def get(self, request, study_id):
        return render(request, TEMPLATE, _context(get_object_or_404(Study, pk=study_id)))

    def post(self, request, study_id):
        study = get_object_or_404(Study, pk=study_id)
        form = PhysicianSampleForm(request.POST, judges=study_judges(study))
        if not form.is_valid():
            return render(request, TEMPLATE, _context(study, form), status=400)
        data = form.cleaned_data
        try:
            physician_sample_draw(
                study,
                share=data["share"],
                number=data["number"],
                design=data["design"],
                judge=data["judge"] or None,
                seed=data["seed"],
                by=request.user,
            )
        except DomainError as exc:
            messages.error(request, f"The sample was not drawn: {exc}")
            return redirect("study_physician_sample", study_id=study.pk)
        messages.success(request, design_sentence(study.physician_sample))
        return redirect("study_detail", study_id=study.pk)
