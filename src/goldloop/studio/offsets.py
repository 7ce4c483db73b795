"""Offsets at the Label Studio boundary, under the name the README documents (code in
:mod:`goldloop.formats.labelstudio.offsets`)."""

from goldloop.formats.labelstudio.offsets import OffsetError, from_label_studio, to_label_studio

__all__ = ["OffsetError", "from_label_studio", "to_label_studio"]
