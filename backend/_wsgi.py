"""The app module Label Studio's backend examples serve (``gunicorn _wsgi:app``); goldloop does the work."""

from goldloop.backend.app import create_app

app = create_app()
