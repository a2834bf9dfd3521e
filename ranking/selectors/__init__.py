"""Read-only queries of the ranking app: studies, queues and progress (``studies``), spans (``spans``)."""
