"""The Label Studio ML backend: the protocol on FastAPI over the annotate core (``backend`` extra)."""

from goldloop.backend.app import create_app
from goldloop.backend.predictor import Predictor
from goldloop.backend.settings import AnnotatorSpec, BackendSettings

__all__ = ["AnnotatorSpec", "BackendSettings", "Predictor", "create_app"]
