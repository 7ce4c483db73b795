"""A Label Studio export read as data: no network client, no SDK, no workflow.

The names of the labeling config's controls (``controls``), offsets at the boundary
(``offsets``), tasks and their annotations (``tasks``), regions and verdicts (``verdicts``), when
two annotators' versions agree (``versions``) and the verified gold (``verify``). ``goldloop pull``
feeds these a fresh export; ``goldloop score`` and the documents reader a Label Studio JSON export
file.
"""
