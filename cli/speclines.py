"""Where each catalogued rule is in the spec text: kept importable from here for scripts and tests
that used this path; the code lives in ``properties.speclines`` (the HTML pages of ``diagrams``
read it too, and ``diagrams`` sits below ``cli``).

Must not know: anything of its own.
"""

from __future__ import annotations

from properties.speclines import SPEC_NAME, _sections, default_spec, rule_sentences, spec_lines

__all__ = ["SPEC_NAME", "_sections", "default_spec", "rule_sentences", "spec_lines"]
