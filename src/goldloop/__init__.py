"""goldloop: a human-verified gold set of relation mentions, with LLM help and Label Studio."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("goldloop")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0"
