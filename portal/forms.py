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
    password = forms.CharField(
        required=False,
        widget=forms.PasswordInput,
        help_text="Optional: leave empty and the person uses password reset.",
    )


class InstitutionForm(forms.ModelForm):
    class Meta:
        model = Institution
        fields = ["name", "country"]
