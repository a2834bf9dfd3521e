"""The portal's settings with the floor endpoints of ``_floor_urls.py`` added (``bench_capacity.py --floor``)."""

from config.settings import *  # noqa: F403

ROOT_URLCONF = "_floor_urls"
