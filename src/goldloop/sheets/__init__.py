"""Sheets: review and labelling without a server, as files a person fills in.

``review``: the gold review sheet (one TSV row per candidate span, a verdict per row), read back
into verified gold through the same verdict code ``pull`` uses. ``labelling``: the precision
sample as markdown sheets to tick, read back as labels.
"""
