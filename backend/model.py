"""Label Studio's ML backend convention: the model. goldloop's predictor is the one implementation.

``GoldloopModel.from_settings(BackendSettings.from_env(os.environ))`` builds it from the environment;
``await model.predict(tasks, label_config)`` returns one result per task, as ``/predict`` does.
"""

from goldloop.backend.config import BackendSettings
from goldloop.backend.predictor import Predictor as GoldloopModel

__all__ = ["BackendSettings", "GoldloopModel"]
