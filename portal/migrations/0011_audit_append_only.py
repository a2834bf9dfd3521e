"""The audit trail becomes append-only in the database, as releases are, and gets the indexes of its page.

UPDATE is refused always. DELETE is refused except by the retention purge (``manage.py audit_prune``): its
transaction sets ``portal.audit_purge = 'on'`` and ``portal.audit_retention_days`` with ``SET LOCAL``, and then only
entries older than that many days (at least one) may go. TRUNCATE skips row triggers, so it is refused per statement
while the table holds rows; an empty table may be truncated, as for releases (Django's flush truncates every table).

pg_restore (``manage.py restore``) is unaffected: a dump's triggers are created after its data is loaded.
"""

from django.db import migrations, models

GUARD_SQL = """
CREATE OR REPLACE FUNCTION portal_audit_guard() RETURNS trigger AS $$
DECLARE
    -- current_setting(..., true) is NULL when never set in the session and '' once a SET LOCAL has ended.
    purge boolean := coalesce(nullif(current_setting('portal.audit_purge', true), ''), 'off') = 'on';
    days text := nullif(current_setting('portal.audit_retention_days', true), '');
BEGIN
    IF TG_OP = 'DELETE' AND purge AND days ~ '^[0-9]{1,6}$' AND days::int >= 1
            AND OLD.at < now() - make_interval(days => days::int) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'the audit trail is append-only: % on % refused', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'integrity_constraint_violation';
END $$ LANGUAGE plpgsql;
CREATE TRIGGER audit_append_only BEFORE UPDATE OR DELETE ON portal_auditentry
    FOR EACH ROW EXECUTE FUNCTION portal_audit_guard();

CREATE OR REPLACE FUNCTION portal_refuse_audit_truncate() RETURNS trigger AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM portal_auditentry) THEN
        RAISE EXCEPTION 'the audit trail is append-only: TRUNCATE on % refused', TG_TABLE_NAME
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NULL;
END $$ LANGUAGE plpgsql;
CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON portal_auditentry
    FOR EACH STATEMENT EXECUTE FUNCTION portal_refuse_audit_truncate();
"""

REVERSE_SQL = """
DROP TRIGGER IF EXISTS audit_no_truncate ON portal_auditentry;
DROP FUNCTION IF EXISTS portal_refuse_audit_truncate();
DROP TRIGGER IF EXISTS audit_append_only ON portal_auditentry;
DROP FUNCTION IF EXISTS portal_audit_guard();
"""


class Migration(migrations.Migration):
    dependencies = [
        ("portal", "0010_user_training_level_specialty"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="auditentry",
            index=models.Index(fields=["actor", "at", "id"], name="audit_actor_at"),
        ),
        migrations.AddIndex(
            model_name="auditentry",
            index=models.Index(fields=["action", "at", "id"], name="audit_action_at"),
        ),
        migrations.RunSQL(GUARD_SQL, REVERSE_SQL),
    ]
