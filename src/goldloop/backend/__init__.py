"""The Label Studio ML backend: the protocol on FastAPI over the annotate core (``backend`` extra)."""

from goldloop.backend.app import create_app
from goldloop.backend.config import AnnotatorSpec, BackendSettings
from goldloop.backend.predictor import Predictor

__all__ = ["AnnotatorSpec", "BackendSettings", "Predictor", "create_app"]
