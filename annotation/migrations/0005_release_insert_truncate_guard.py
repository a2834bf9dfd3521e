"""Releases: the database also refuses INSERT of items into a frozen release and TRUNCATE of release tables.

The freeze creates its release row with ``frozen = false``, inserts the items, and sets ``frozen = true`` as its
last step, all in one transaction. Only that transaction can see the unfrozen row, so only the freeze itself can
add items; a deferred check refuses to commit a release left unfrozen. Existing releases are marked frozen.

pg_restore (``manage.py restore``) is unaffected: a dump's triggers are created after its data is loaded.
"""

from django.db import migrations, models

GUARD_SQL = """
-- UPDATE / DELETE of a release row: refused, except the freeze's own last step (frozen false -> true,
-- nothing else changed).
CREATE OR REPLACE FUNCTION portal_release_guard() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        IF NOT OLD.frozen AND NEW.frozen AND (to_jsonb(NEW) - 'frozen') = (to_jsonb(OLD) - 'frozen') THEN
            RETURN NEW;
        END IF;
    END IF;
    RAISE EXCEPTION 'releases are immutable: % on % refused', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'integrity_constraint_violation';
END $$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS release_immutable ON annotation_release;
CREATE TRIGGER release_immutable BEFORE UPDATE OR DELETE ON annotation_release
    FOR EACH ROW EXECUTE FUNCTION portal_release_guard();

-- A release must be frozen by the end of the transaction that created it.
CREATE OR REPLACE FUNCTION portal_release_frozen_at_commit() RETURNS trigger AS $$
BEGIN
    IF NOT (SELECT frozen FROM annotation_release WHERE id = NEW.id) THEN
        RAISE EXCEPTION 'releases are immutable: release % was not frozen in the transaction that created it',
            NEW.id USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NULL;
END $$ LANGUAGE plpgsql;
CREATE CONSTRAINT TRIGGER release_frozen_at_commit AFTER INSERT ON annotation_release
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION portal_release_frozen_at_commit();

-- Items may be inserted only into a release that is not frozen yet (one check per statement: a freeze
-- inserts its items in a few large statements).
CREATE OR REPLACE FUNCTION portal_release_item_insert_guard() RETURNS trigger AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM inserted i JOIN annotation_release r ON r.id = i.release_id WHERE r.frozen) THEN
        RAISE EXCEPTION 'releases are immutable: INSERT into the items of a frozen release refused'
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NULL;
END $$ LANGUAGE plpgsql;
CREATE TRIGGER release_item_insert_guard AFTER INSERT ON annotation_releaseitem
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION portal_release_item_insert_guard();

-- TRUNCATE skips row triggers, so it is refused per statement while the table holds rows. An empty table may
-- be truncated: Django's flush (and its test runner) truncates every table at once, harmlessly for this one.
CREATE OR REPLACE FUNCTION portal_refuse_release_truncate() RETURNS trigger AS $$
DECLARE
    holds_rows boolean;
BEGIN
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I.%I)', TG_TABLE_SCHEMA, TG_TABLE_NAME) INTO holds_rows;
    IF holds_rows THEN
        RAISE EXCEPTION 'releases are immutable: TRUNCATE on % refused', TG_TABLE_NAME
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NULL;
END $$ LANGUAGE plpgsql;
CREATE TRIGGER release_no_truncate BEFORE TRUNCATE ON annotation_release
    FOR EACH STATEMENT EXECUTE FUNCTION portal_refuse_release_truncate();
CREATE TRIGGER release_item_no_truncate BEFORE TRUNCATE ON annotation_releaseitem
    FOR EACH STATEMENT EXECUTE FUNCTION portal_refuse_release_truncate();

-- Every release that exists was frozen by the code before this flag existed.
UPDATE annotation_release SET frozen = true;
"""

REVERSE_SQL = """
DROP TRIGGER IF EXISTS release_item_no_truncate ON annotation_releaseitem;
DROP TRIGGER IF EXISTS release_no_truncate ON annotation_release;
DROP FUNCTION IF EXISTS portal_refuse_release_truncate();
DROP TRIGGER IF EXISTS release_item_insert_guard ON annotation_releaseitem;
DROP FUNCTION IF EXISTS portal_release_item_insert_guard();
DROP TRIGGER IF EXISTS release_frozen_at_commit ON annotation_release;
DROP FUNCTION IF EXISTS portal_release_frozen_at_commit();
DROP TRIGGER IF EXISTS release_immutable ON annotation_release;
CREATE TRIGGER release_immutable BEFORE UPDATE OR DELETE ON annotation_release
    FOR EACH ROW EXECUTE FUNCTION portal_refuse_release_change();
DROP FUNCTION IF EXISTS portal_release_guard();
"""


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0004_review_queue_indexes"),
    ]

    operations = [
        migrations.AddField(
            model_name="release",
            name="frozen",
            field=models.BooleanField(default=False, editable=False),
        ),
        migrations.RunSQL(GUARD_SQL, REVERSE_SQL),
    ]
