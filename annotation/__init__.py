"""The annotation app: QA items, their vetting by medical students, reviewer guidelines and frozen releases.

One package per layer (``models/``, ``selectors/``, ``services/``, ``forms/``, ``serializers/``, ``views/``,
``api/``), and inside each one module per sub-domain, always under the same word:

- items: QA items, their source passages, import batches; the item browser and item page, imports.
- review: one reviewer's work on one item: the queue (``queue``), the lease, the review page and its submission,
  changing one's own review (``review_edit``), the server-side draft (``review_drafts``), and the conflict-of-interest
  rule that decides who may see other people's judgements.
- disputes: disputes and feedback notes filed on an item, their threads; an open one holds the item.
- adjudication: the adjudicator's queue and final decision on an item, and the organizers' way forward for an item
  no adjudicator may decide (its page and API sit with the vetting ones).
- vetting: the organizers' oversight of the whole process: dashboard and progress figures, workflow settings
  (``vetting_config``), batches, gold items (``gold``).
- guidelines: the reviewer guidelines (codebook), their versions and acknowledgements.
- releases: freezing, reading and exporting benchmark releases (``release_contents``: what a release would hold).

The item status machine is ``workflow`` (pure rules) with ``services/transitions`` applying it.
"""
