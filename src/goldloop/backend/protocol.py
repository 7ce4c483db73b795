"""The bodies Label Studio sends to an ML backend (1.23), as the backend reads them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from goldloop.errors import GoldloopError
from goldloop.studio.label_config import label_interface


class _Body(BaseModel):
    # Label Studio adds fields between releases: keep what we do not read.
    model_config = ConfigDict(extra="allow")


class Task(_Body):
    id: int | None = None
    data: dict[str, Any] = Field(default_factory=dict)
    predictions: list[Any] = Field(default_factory=list)


class PredictRequest(_Body):
    tasks: list[Task]
    label_config: str | None = None
    project: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)

    @field_validator("label_config")
    @classmethod
    def _parsable(cls, config: str | None) -> str | None:
        """A config that does not parse is the request's fault (400), not the backend's (500)."""
        if not config:
            return None
        try:
            label_interface(config)
        except Exception as exc:  # the SDK raises its own XML and config errors
            raise ValueError(f"not a Label Studio labeling config: {exc}") from None
        return config


class SetupRequest(_Body):
    project: str | int | None = None
    schema_: str | None = Field(default=None, alias="schema")
    hostname: str | None = None
    extra_params: Any = None


class WebhookEvent(_Body):
    action: str


@dataclass(frozen=True)
class Health:
    """The answer to ``GET /health`` (and ``/``): Label Studio reads the status and the model
    version, the version of the review predictions the backend serves."""

    model_version: str
    status: str = "UP"
    model_class: str = "goldloop"

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "model_class": self.model_class,
            "model_version": self.model_version,
        }


class BadRequest(GoldloopError):
    """A request body that is not JSON or not the shape the protocol expects (HTTP 400)."""


Body = TypeVar("Body", bound=_Body)


def parse_body(raw: bytes, model: type[Body]) -> Body:
    """Parse a request body (JSON read and validated in one pass); a clear ``BadRequest`` names
    what is wrong."""
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        errors = exc.errors()
        if errors[0]["type"] == "json_invalid":
            raise BadRequest(f"request body is not valid JSON: {errors[0]['msg']}") from None
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in errors
        )
        raise BadRequest(f"request body is not a {model.__name__}: {problems}") from None
