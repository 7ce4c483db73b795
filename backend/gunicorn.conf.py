"""gunicorn settings for the backend container; each knob is an environment variable."""

import os

from goldloop.backend.serve import WORKER_CLASS, WORKER_TIMEOUT

bind = f"0.0.0.0:{os.environ.get('PORT', '9090')}"
workers = int(os.environ.get("WORKERS", "2"))
worker_class = WORKER_CLASS
timeout = int(os.environ.get("WORKER_TIMEOUT", str(WORKER_TIMEOUT)))
accesslog = "-"
loglevel = os.environ.get("LOG_LEVEL", "info")
