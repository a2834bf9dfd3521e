import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

# Import the URL conf (and with it every view module) now, while the worker boots, instead of inside the
# first request it serves: that request would otherwise wait for all those imports, once per worker after every
# (re)start.
get_resolver().url_patterns  # noqa: B018 - evaluated for its side effect
