"""The bottom layer's pure formats: files goldloop reads and writes, read as data.

``formats.gold`` is the gold file; ``formats.documents`` the documents reader; ``formats.mention``
a mention sample's rows; ``formats.sampledir`` the sample dir; ``formats.labelstudio`` a Label
Studio export (tasks, their regions, verdicts, verified gold). Writing files (CSV, JSON Lines,
atomic writes, locks) is ``goldloop.files``.
"""
