"""A person's session epoch, raised by "Sign out everywhere": every session signed in before it stops working
(``User.get_session_auth_hash``). 0 for everyone, which keeps today's sessions valid."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("portal", "0007_hot_table_indexes"),
    ]

    operations = [
        migrations.AddField(
            model_name="user",
            name="session_epoch",
            field=models.PositiveIntegerField(default=0, editable=False),
        ),
    ]
