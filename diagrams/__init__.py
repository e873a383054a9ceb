"""Diagrams drawn from the model's own machine tables (issue 7).

Owns: one intermediate form (``diagrams.ir``) built from ``model.registry.MACHINES`` and every
renderer fed from it (matplotlib PNG/SVG, Mermaid ``stateDiagram-v2``, Markdown tables), Mermaid
sequence diagrams of transcripts (``diagrams.sequence``), a small composed state graph
(``diagrams.composed``) and the generator behind ``acp-model diagrams`` (``diagrams.generate``).
The generated files under ``diagrams/`` are committed and kept fresh by a staleness test.

Must not know: how machines execute, JSON-RPC beyond what a sequence label needs, or the CLI.
"""
