"""``StudioError`` under the name the Label Studio workflow imports it by (the class is in
:mod:`goldloop.formats.labelstudio.errors`: reading an export raises it too)."""

from goldloop.formats.labelstudio.errors import StudioError

__all__ = ["StudioError"]
