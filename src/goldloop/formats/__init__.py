"""The bottom layer's pure formats: files goldloop reads and writes, read as data (#28, step one).

``formats.sampledir`` is the sample dir; ``formats.labelstudio`` a Label Studio export (tasks,
their regions, verdicts, verified gold). Gold (``goldloop.formats.gold``), the documents reader
(``goldloop.formats.documents``), CSV, JSON Lines and atomic writes are still modules of the root.
"""
