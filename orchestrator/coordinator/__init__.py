"""The model-backed coordinator: context packet → read-tool loop → structured action plan →
deterministic validation → execution of allowed actions → answer + hash-chained transcript.

Model reasoning owns interpretation; this package's deterministic code owns authority.
"""
