from django import forms

from portal.models import Institution
from portal.roles import Role


class PersonForm(forms.Form):
    email = forms.EmailField()
    name = forms.CharField(required=False, max_length=150)
    institution = forms.ModelChoiceField(queryset=Institution.objects.filter(admitted=True), required=False)
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


class InstitutionForm(forms.ModelForm):
    class Meta:
        model = Institution
        fields = ["name", "country"]
