"""goldloop: a human-verified gold set of relation mentions, with LLM help and Label Studio."""

__version__ = "0.1.0"
