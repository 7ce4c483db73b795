"""LLM tasks, one home: each task's prompt, answer schema and reading of an answer.

:mod:`~goldloop.llm.tasks.task` is the protocol every task follows, the one way to run any task
(through :mod:`goldloop.llm.runner`), the outcomes and their report. The tasks: pre-annotation
(:mod:`~goldloop.llm.tasks.preannotate`), the precision judge (:mod:`~goldloop.llm.tasks.judge`),
the llm linking baseline (:mod:`~goldloop.llm.tasks.linking`) and interactive suggestions
(:mod:`~goldloop.llm.tasks.suggest`); their callers (``llm.annotate``, ``precision.llm_judge``,
``scoring.baselines``, ``backend.interactive``) only choose the items and use the results.
"""
