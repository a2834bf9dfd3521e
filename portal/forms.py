from django import forms
from django.db.models import Q

from portal.models import SPECIALTY_MAX_LENGTH, Institution, TrainingLevel, User
from portal.roles import Role


def person_email_field(**kwargs) -> forms.EmailField:
    """A person's e-mail address, no longer than the column that keeps it (254 characters, RFC 5321's limit):
    a longer one is a form error naming the field, not a refusal by the database (a server error). Every form that
    takes a person's address uses it (the people page, allauth's forms through ``PortalAccountAdapter``)."""
    return forms.EmailField(max_length=User._meta.get_field("email").max_length, **kwargs)


class PersonForm(forms.Form):
    email = person_email_field()
    name = forms.CharField(required=False, max_length=150)
    institution = forms.ModelChoiceField(
        queryset=Institution.objects.filter(admitted=True), required=False, empty_label="No institution"
    )
    roles = forms.MultipleChoiceField(
        choices=[(r.value, r.value.title()) for r in Role], widget=forms.CheckboxSelectMultiple, required=False
    )
    # Organizers never set passwords: the person sets their own from an emailed link (portal.services).
    invite = forms.BooleanField(
        required=False,
        initial=True,
        label="Email a set-password link",
        help_text="The link goes to the person's address only; it can be sent again from the list below.",
    )


class PersonEditForm(forms.Form):
    """A person's row edited: name, institution, roles, training level and specialty (the email is their sign-in and
    stays)."""

    name = forms.CharField(required=False, max_length=150)
    institution = forms.ModelChoiceField(
        queryset=Institution.objects.none(), required=False, empty_label="No institution"
    )
    roles = forms.MultipleChoiceField(
        choices=[(r.value, r.value.title()) for r in Role], widget=forms.CheckboxSelectMultiple, required=False
    )
    training_level = forms.ChoiceField(
        choices=[("", "Not given"), *TrainingLevel.choices],
        required=False,
        help_text="Seen by organizers only, never by other reviewers.",
    )
    specialty = forms.CharField(
        required=False,
        max_length=SPECIALTY_MAX_LENGTH,
        help_text="e.g. cardiology (optional). Seen by organizers only.",
    )

    def __init__(self, *args, person, **kwargs):
        super().__init__(*args, **kwargs)
        # The person's own institution stays choosable even after its admission was withdrawn.
        self.fields["institution"].queryset = Institution.objects.filter(
            Q(admitted=True) | Q(pk=person.institution_id)
        ).order_by("name")


class InstitutionForm(forms.ModelForm):
    class Meta:
        model = Institution
        fields = ["name", "country"]


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """One or more uploaded files (every import form takes several at once); cleaned to a list."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        single = super().clean
        if isinstance(data, (list, tuple)):
            return [single(d, initial) for d in data]
        return [single(data, initial)]
